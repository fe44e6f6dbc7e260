// `/graph`: the link graph on a canvas. A force layout (repulsion on a grid of cells, so
// 2,000 nodes stay interactive) runs a bounded number of steps; drag pans, the wheel zooms,
// a click on a node opens its note. The node list beside it is for screen readers.
import { api, el, docHref, errorText, fillCollections, ready } from "./app.js";

const canvas = document.getElementById("graph-canvas");
const ctx = canvas.getContext("2d");
const statusEl = document.getElementById("graph-status");
const collection = document.getElementById("graph-collection");
const similar = document.getElementById("graph-similar");
const list = document.getElementById("graph-list");
const COLORS = ["#2f6fde", "#d9480f", "#2b8a3e", "#862e9c", "#c2255c", "#1098ad", "#e67700", "#5c7cfa"];
let nodes = [];
let edges = [];
let view = { x: 0, y: 0, k: 1 };
let frame = null;

function size() {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth;
  const h = canvas.clientHeight;
  canvas.width = Math.floor(w * ratio);
  canvas.height = Math.floor(h * ratio);
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
}

/** Positions by a force layout: springs on edges, repulsion between nodes in nearby cells. */
function layout(steps) {
  const n = nodes.length;
  const byId = new Map(nodes.map((d, i) => [d.id, i]));
  const links = edges.map((e) => [byId.get(e.source), byId.get(e.target)]).filter(([a, b]) => a !== undefined && b !== undefined && a !== b);
  const radius = Math.sqrt(n) * 30 + 50;
  nodes.forEach((d, i) => {
    const a = i * 2.399963; // golden angle: an even start without randomness
    const r = radius * Math.sqrt((i + 0.5) / n);
    d.x = Math.cos(a) * r;
    d.y = Math.sin(a) * r;
    d.vx = 0;
    d.vy = 0;
  });
  const cell = 60;
  for (let s = 0; s < steps; s++) {
    const alpha = 1 - s / steps;
    const grid = new Map();
    nodes.forEach((d, i) => {
      const key = `${Math.floor(d.x / cell)},${Math.floor(d.y / cell)}`;
      (grid.get(key) || grid.set(key, []).get(key)).push(i);
    });
    for (let i = 0; i < n; i++) {
      const d = nodes[i];
      const cx = Math.floor(d.x / cell);
      const cy = Math.floor(d.y / cell);
      for (let gx = cx - 1; gx <= cx + 1; gx++) {
        for (let gy = cy - 1; gy <= cy + 1; gy++) {
          const bucket = grid.get(`${gx},${gy}`);
          if (!bucket) continue;
          for (const j of bucket) {
            if (j <= i) continue;
            const o = nodes[j];
            let dx = d.x - o.x;
            let dy = d.y - o.y;
            let dist2 = dx * dx + dy * dy;
            if (dist2 < 0.01) {
              dx = 0.1 * ((i % 3) - 1) + 0.05;
              dy = 0.1;
              dist2 = 0.02;
            }
            if (dist2 > cell * cell) continue;
            const f = (200 * alpha) / dist2;
            d.vx += dx * f;
            d.vy += dy * f;
            o.vx -= dx * f;
            o.vy -= dy * f;
          }
        }
      }
    }
    for (const [a, b] of links) {
      const p = nodes[a];
      const q = nodes[b];
      const dx = q.x - p.x;
      const dy = q.y - p.y;
      const dist = Math.sqrt(dx * dx + dy * dy) || 1;
      const f = ((dist - 40) / dist) * 0.05 * alpha;
      p.vx += dx * f;
      p.vy += dy * f;
      q.vx -= dx * f;
      q.vy -= dy * f;
    }
    for (const d of nodes) {
      d.vx -= d.x * 0.002 * alpha;
      d.vy -= d.y * 0.002 * alpha;
      d.x += Math.max(-20, Math.min(20, d.vx));
      d.y += Math.max(-20, Math.min(20, d.vy));
      d.vx *= 0.5;
      d.vy *= 0.5;
    }
  }
  return links;
}

function fit() {
  if (!nodes.length) return;
  const xs = nodes.map((d) => d.x);
  const ys = nodes.map((d) => d.y);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const k = Math.min(canvas.clientWidth / (x1 - x0 + 80), canvas.clientHeight / (y1 - y0 + 80), 3);
  view = { k, x: canvas.clientWidth / 2 - ((x0 + x1) / 2) * k, y: canvas.clientHeight / 2 - ((y0 + y1) / 2) * k };
}

let drawnLinks = [];
function draw() {
  frame = null;
  ctx.clearRect(0, 0, canvas.clientWidth, canvas.clientHeight);
  ctx.save();
  ctx.translate(view.x, view.y);
  ctx.scale(view.k, view.k);
  ctx.lineWidth = 0.6 / view.k;
  ctx.strokeStyle = "rgba(120,120,140,0.45)";
  ctx.beginPath();
  for (const [a, b] of drawnLinks) {
    ctx.moveTo(nodes[a].x, nodes[a].y);
    ctx.lineTo(nodes[b].x, nodes[b].y);
  }
  ctx.stroke();
  const colors = new Map();
  for (const d of nodes) {
    if (!colors.has(d.collection)) colors.set(d.collection, COLORS[colors.size % COLORS.length]);
    ctx.fillStyle = colors.get(d.collection);
    ctx.beginPath();
    ctx.arc(d.x, d.y, d.r, 0, Math.PI * 2);
    ctx.fill();
  }
  if (view.k > 1.2 || nodes.length < 60) {
    ctx.fillStyle = getComputedStyle(canvas).color;
    ctx.font = `${11 / view.k}px system-ui, sans-serif`;
    for (const d of nodes) ctx.fillText(d.title, d.x + d.r + 2 / view.k, d.y + 3 / view.k);
  }
  ctx.restore();
}

function redraw() {
  if (!frame) frame = requestAnimationFrame(draw);
}

function nodeAt(px, py) {
  const x = (px - view.x) / view.k;
  const y = (py - view.y) / view.k;
  let best = null;
  let bestD = Infinity;
  for (const d of nodes) {
    const dd = (d.x - x) ** 2 + (d.y - y) ** 2;
    const hit = (d.r + 4 / view.k) ** 2;
    if (dd <= hit && dd < bestD) {
      best = d;
      bestD = dd;
    }
  }
  return best;
}

let loads = 0;
async function load() {
  const mine = ++loads;
  statusEl.textContent = "Loading…";
  const p = new URLSearchParams({ limit: "2000", linkedOnly: "false" });
  if (collection.value) p.set("collection", collection.value);
  if (similar.checked) p.set("includeSimilar", "true");
  const r = await api(`/api/graph?${p}`);
  if (mine !== loads) return; // a newer filter asked meanwhile
  if (!r.ok) {
    statusEl.textContent = errorText(r);
    return;
  }
  nodes = r.data.nodes.map((d) => ({ ...d, r: 3 + Math.min(8, Math.sqrt(d.degree) * 1.5) }));
  edges = r.data.links;
  const started = performance.now();
  drawnLinks = layout(nodes.length > 1000 ? 120 : 250);
  size();
  fit();
  draw();
  const took = performance.now() - started;
  statusEl.textContent = `${nodes.length} notes · ${edges.length} links · laid out in ${Math.round(took)} ms`;
  document.body.dataset.graphLayoutMs = took.toFixed(1);
  list.replaceChildren(...nodes.slice(0, 500).map((d) => el("li", {}, el("a", { href: docHref(d.uri) }, d.title))));
  document.body.dataset.graphReady = "true";
}

let drag = null;
canvas.addEventListener("pointerdown", (e) => {
  drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
  canvas.setPointerCapture(e.pointerId);
});
canvas.addEventListener("pointermove", (e) => {
  if (drag) {
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
    view.x = drag.vx + dx;
    view.y = drag.vy + dy;
    redraw();
    return;
  }
  const rect = canvas.getBoundingClientRect();
  const hit = nodeAt(e.clientX - rect.left, e.clientY - rect.top);
  canvas.style.cursor = hit ? "pointer" : "grab";
  canvas.title = hit ? hit.title : "";
});
canvas.addEventListener("pointerup", (e) => {
  const wasDrag = drag && drag.moved;
  drag = null;
  if (wasDrag) return;
  const rect = canvas.getBoundingClientRect();
  const hit = nodeAt(e.clientX - rect.left, e.clientY - rect.top);
  if (hit) location.href = docHref(hit.uri);
});
canvas.addEventListener("wheel", (e) => {
  e.preventDefault();
  const rect = canvas.getBoundingClientRect();
  const px = e.clientX - rect.left;
  const py = e.clientY - rect.top;
  const f = Math.exp(-e.deltaY * 0.0015);
  const k = Math.max(0.05, Math.min(20, view.k * f));
  view.x = px - ((px - view.x) * k) / view.k;
  view.y = py - ((py - view.y) * k) / view.k;
  view.k = k;
  redraw();
}, { passive: false });
canvas.addEventListener("keydown", (e) => {
  const step = 40;
  const moves = { ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
  if (moves[e.key]) {
    view.x += moves[e.key][0];
    view.y += moves[e.key][1];
  } else if (e.key === "+" || e.key === "=") view.k *= 1.2;
  else if (e.key === "-") view.k /= 1.2;
  else return;
  e.preventDefault();
  redraw();
});
window.addEventListener("resize", () => {
  size();
  redraw();
});
collection.addEventListener("change", load);
similar.addEventListener("change", load);

await fillCollections(collection);
// Where a node is on screen (page coordinates): lets the browser tests click a node.
window.__svcGraph = {
  count: () => nodes.length,
  screenOf(title, rect) {
    const d = nodes.find((n) => n.title === title);
    return d ? { x: rect.left + view.x + d.x * view.k, y: rect.top + view.y + d.y * view.k } : null;
  },
};
await load();
ready();
