//! The shapes text is found in: a quadrilateral of four corners (a rotated rectangle as the
//! detector's boxes are), with what the pipeline asks of it.

/// A point in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

impl Point {
    pub fn new(x: f32, y: f32) -> Point {
        Point { x, y }
    }

    fn distance(self, other: Point) -> f32 {
        ((self.x - other.x).powi(2) + (self.y - other.y).powi(2)).sqrt()
    }
}

/// Four corners in reading order: top left, top right, bottom right, bottom left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quad(pub [Point; 4]);

impl Quad {
    /// The corners of any four points, put in reading order: the two leftmost are the left
    /// side (the upper one first), the two others the right side.
    pub fn ordered(points: [Point; 4]) -> Quad {
        let mut by_x = points;
        by_x.sort_by(|a, b| a.x.total_cmp(&b.x));
        let (mut left, mut right) = ([by_x[0], by_x[1]], [by_x[2], by_x[3]]);
        left.sort_by(|a, b| a.y.total_cmp(&b.y));
        right.sort_by(|a, b| a.y.total_cmp(&b.y));
        Quad([left[0], right[0], right[1], left[1]])
    }

    /// The longer of the top and bottom sides.
    pub fn width(&self) -> f32 {
        let [tl, tr, br, bl] = self.0;
        tl.distance(tr).max(bl.distance(br))
    }

    /// The longer of the left and right sides.
    pub fn height(&self) -> f32 {
        let [tl, tr, br, bl] = self.0;
        tl.distance(bl).max(tr.distance(br))
    }

    /// The area (shoelace formula) and the perimeter.
    pub fn area_and_perimeter(&self) -> (f32, f32) {
        let p = self.0;
        let mut twice_area = 0.0;
        let mut perimeter = 0.0;
        for i in 0..4 {
            let (a, b) = (p[i], p[(i + 1) % 4]);
            twice_area += a.x * b.y - b.x * a.y;
            perimeter += a.distance(b);
        }
        (twice_area.abs() / 2.0, perimeter)
    }

    /// The rectangle grown by `distance` on every side (the detector's boxes hug the text's
    /// core: DB's "unclip"). For a rectangle, offsetting its outline by `distance` and taking
    /// the smallest rectangle around the result gives exactly this.
    pub fn grown(&self, distance: f32) -> Quad {
        let [tl, tr, br, bl] = self.0;
        let center = Point::new((tl.x + tr.x + br.x + bl.x) / 4.0, (tl.y + tr.y + br.y + bl.y) / 4.0);
        let along = unit(tl, tr).or_else(|| unit(bl, br)).unwrap_or(Point::new(1.0, 0.0));
        let across = Point::new(-along.y, along.x);
        let half_w = (tl.distance(tr) + bl.distance(br)) / 4.0 + distance;
        let half_h = (tl.distance(bl) + tr.distance(br)) / 4.0 + distance;
        let corner = |sx: f32, sy: f32| {
            Point::new(
                center.x + sx * half_w * along.x + sy * half_h * across.x,
                center.y + sx * half_w * along.y + sy * half_h * across.y,
            )
        };
        Quad::ordered([corner(-1.0, -1.0), corner(1.0, -1.0), corner(1.0, 1.0), corner(-1.0, 1.0)])
    }

    /// The shorter side of the rectangle.
    pub fn short_side(&self) -> f32 {
        self.width().min(self.height())
    }

    /// Whether `p` lies inside (or on) the convex quadrilateral.
    pub fn contains(&self, p: Point) -> bool {
        let q = self.0;
        let mut sign = 0.0f32;
        for i in 0..4 {
            let (a, b) = (q[i], q[(i + 1) % 4]);
            let cross = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x);
            if cross.abs() < 1e-6 {
                continue;
            }
            if sign == 0.0 {
                sign = cross.signum();
            } else if cross.signum() != sign {
                return false;
            }
        }
        true
    }

    /// Every corner scaled by `sx`, `sy` and kept within `0..=max_x`, `0..=max_y`.
    pub fn scaled(&self, sx: f32, sy: f32, max_x: f32, max_y: f32) -> Quad {
        Quad(self.0.map(|p| Point::new((p.x * sx).round().clamp(0.0, max_x), (p.y * sy).round().clamp(0.0, max_y))))
    }

    /// The top edge's left end, by which boxes are put in reading order.
    pub fn top_left(&self) -> Point {
        self.0[0]
    }

    /// The vertical middle.
    pub fn center_y(&self) -> f32 {
        self.0.iter().map(|p| p.y).sum::<f32>() / 4.0
    }
}

fn unit(a: Point, b: Point) -> Option<Point> {
    let d = a.distance(b);
    (d > 1e-6).then(|| Point::new((b.x - a.x) / d, (b.y - a.y) / d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: f32, y: f32, w: f32, h: f32) -> Quad {
        Quad::ordered([Point::new(x + w, y), Point::new(x, y + h), Point::new(x, y), Point::new(x + w, y + h)])
    }

    #[test]
    fn corners_are_put_in_reading_order() {
        let q = rect(10.0, 20.0, 100.0, 30.0);
        assert_eq!(
            q.0,
            [Point::new(10.0, 20.0), Point::new(110.0, 20.0), Point::new(110.0, 50.0), Point::new(10.0, 50.0)]
        );
        assert_eq!((q.width(), q.height(), q.short_side()), (100.0, 30.0, 30.0));
        assert_eq!(q.area_and_perimeter(), (3000.0, 260.0));
    }

    #[test]
    fn a_grown_rectangle_keeps_its_center_and_angle() {
        let g = rect(10.0, 20.0, 100.0, 30.0).grown(5.0);
        assert_eq!(g.0[0], Point::new(5.0, 15.0));
        assert_eq!(g.0[2], Point::new(115.0, 55.0));
        // A rectangle turned by 45 degrees stays turned.
        let s = 2f32.sqrt();
        let turned =
            Quad([Point::new(0.0, 10.0), Point::new(10.0, 0.0), Point::new(20.0, 10.0), Point::new(10.0, 20.0)]);
        let g = turned.grown(s);
        assert!((g.width() - (200f32.sqrt() + 2.0 * s)).abs() < 1e-3, "{g:?}");
    }

    #[test]
    fn points_inside_and_outside() {
        let q = rect(0.0, 0.0, 10.0, 4.0);
        assert!(q.contains(Point::new(5.0, 2.0)) && q.contains(Point::new(0.0, 0.0)));
        assert!(!q.contains(Point::new(11.0, 2.0)) && !q.contains(Point::new(5.0, -1.0)));
    }
}
