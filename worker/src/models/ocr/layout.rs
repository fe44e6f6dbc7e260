//! Reading order: boxes top to bottom, and left to right within a row.

use super::geometry::Quad;
use super::Line;

/// Boxes whose top edges lie this close are on one row.
const SAME_ROW_PX: f32 = 10.0;

/// `boxes` in reading order: by their top-left corner's height, then, among boxes whose tops
/// are within [`SAME_ROW_PX`] of each other, left to right (the reference's `sorted_boxes`).
pub fn reading_order(mut boxes: Vec<Quad>) -> Vec<Quad> {
    boxes.sort_by(|a, b| {
        let (a, b) = (a.top_left(), b.top_left());
        a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x))
    });
    for i in 0..boxes.len().saturating_sub(1) {
        for j in (0..=i).rev() {
            let (next, this) = (boxes[j + 1].top_left(), boxes[j].top_left());
            if (next.y - this.y).abs() < SAME_ROW_PX && next.x < this.x {
                boxes.swap(j, j + 1);
            } else {
                break;
            }
        }
    }
    boxes
}

/// The lines' texts grouped in rows: a line whose vertical middle lies within the previous
/// line's height, to its right, continues that row.
pub fn rows(lines: &[Line]) -> Vec<Vec<&str>> {
    let mut out: Vec<Vec<&str>> = Vec::new();
    let mut last: Option<&Line> = None;
    for line in lines {
        let continues = last.is_some_and(|prev| {
            (line.quad.center_y() - prev.quad.center_y()).abs() < prev.quad.height() / 2.0
                && line.quad.top_left().x > prev.quad.top_left().x
        });
        match out.last_mut() {
            Some(row) if continues => row.push(&line.text),
            _ => out.push(vec![&line.text]),
        }
        last = Some(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::geometry::Point;
    use super::*;

    fn at(x: f32, y: f32) -> Quad {
        Quad([Point::new(x, y), Point::new(x + 50.0, y), Point::new(x + 50.0, y + 20.0), Point::new(x, y + 20.0)])
    }

    #[test]
    fn boxes_read_top_to_bottom_then_left_to_right() {
        let order = reading_order(vec![at(200.0, 104.0), at(10.0, 100.0), at(10.0, 40.0), at(300.0, 98.0)]);
        let xs: Vec<(f32, f32)> = order.iter().map(|q| (q.top_left().x, q.top_left().y)).collect();
        assert_eq!(xs, [(10.0, 40.0), (10.0, 100.0), (200.0, 104.0), (300.0, 98.0)]);
        let line = |q: Quad, t: &str| Line { text: t.into(), confidence: 0.9, quad: q };
        let lines =
            [line(order[0], "Title"), line(order[1], "left"), line(order[2], "middle"), line(order[3], "right")];
        assert_eq!(rows(&lines), vec![vec!["Title"], vec!["left", "middle", "right"]]);
    }
}
