// SPDX-License-Identifier: Apache-2.0
/// @file
/// The memory report as pictures: `report_page`, one self-contained HTML page (inline style
/// and script, no network), and `report_svg`, a static SVG of the same whole-memory view
/// (through `io/codec/svg.hpp`).
///
/// The page: memory over time for the whole program, stacked by allocation (every buffer a
/// band, coloured by kind) or by kind; the peak marked; hover shows a buffer's name, shape,
/// size, live range and source; the wheel zooms, dragging pans, a double click resets; the
/// largest buffers live at the peak in a table (hovering a row highlights its buffer); a
/// second tab with the temporary heap's offsets over time. When anything lives in host memory or
/// moves there (host offloading), a second chart under the first: host bytes over time on the
/// same time axis (zoomed and panned with it), each transfer marked (up: to host, down: back)
/// with its instruction, bytes and source on hover. With `#selftest` in the address
/// the page hovers its own largest peak buffer through a synthetic mouse event at that
/// buffer's place on screen and writes what the tooltip then says into `#selftest` (the
/// Chromium test, test/page/page_test.py, reads it), together with any script error.
///
/// Output size is O(buffers + segments + time steps), bounded by a level of detail: above
/// 20,000 buffers the page lists and draws the 20,000 largest (bytes x live steps) and every
/// buffer of its peak table, above 20,000 time steps the kind view has one bar per bucket of
/// steps (its fullest), and a line among the facts says so (`detail::page_detail_of`); the
/// static SVG keeps its own (`io/codec/svg.hpp`). Text from the input (names, shapes,
/// sources) reaches the page only escaped: as JSON inside a script element whose "</" is
/// written "<\/", and through `textContent` or an escaping function in the script.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xlamem/io/codec/json.hpp"
#include "xlamem/io/codec/svg.hpp"
#include "xlamem/io/codec/text_format.hpp"
#include "xlamem/io/report/views.hpp"
#include "xlamem/report/memory_report.hpp"
#include "xlamem/report/op_source.hpp"

namespace xlamem {

namespace detail {

inline constexpr const char* page_style = R"CSS(
body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}
.sub{color:#555;margin:0 0 10px}
.facts span{display:inline-block;margin-right:18px}
.tabs button{font:inherit;padding:6px 14px;border:1px solid #bbb;background:#f4f4f4;cursor:pointer}
.tabs button.on{background:#fff;border-bottom-color:#fff;font-weight:600}
.panel{border:1px solid #bbb;padding:10px;margin-top:-1px}
.hidden{display:none}
.controls{margin-bottom:6px}
.controls label{margin-right:14px}
svg{background:#fff;user-select:none}
#tooltip{position:fixed;pointer-events:none;background:#fffff0;border:1px solid #888;padding:6px 8px;
  font-size:12px;max-width:520px;box-shadow:2px 2px 6px rgba(0,0,0,.2);display:none;z-index:10}
#tooltip b{font-size:13px}
table{border-collapse:collapse;margin-top:10px;font-size:13px}
th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
tr:hover{background:#eef4ff}
.hl{stroke:#000;stroke-width:1.5px}
.legend span{display:inline-block;margin-right:12px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
#selftest{white-space:pre-wrap;font-size:11px;color:#555}
)CSS";

inline constexpr const char* page_script = R"JS(
'use strict';
const errors = [];
window.addEventListener('error', e => { errors.push(String(e.message)); });
const consoleError = console.error.bind(console);
console.error = (...a) => { errors.push(a.join(' ')); consoleError(...a); };
const D = JSON.parse(document.getElementById('data').textContent);
const NS = 'http://www.w3.org/2000/svg';
const HUES = [210, 130, 28, 280, 0];
const W = 1100, H = 440, L = 84, R = 16, T = 14, B = 36, PW = W - L - R, PH = H - T - B;
const view = {t0: 0, t1: D.horizon};
let mode = 'allocation';
function human(b) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']; let v = Math.abs(b), i = 0;
  while (v >= 1024 && i < 5) { v /= 1024; i++; }
  const s = i === 0 ? String(v) : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2);
  return (b < 0 ? '-' : '') + s + ' ' + u[i];
}
function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function colour(i) {
  const b = D.buffers[i], h = HUES[b[3]] + ((i * 37) % 24) - 12;
  return 'hsl(' + h + ',55%,' + (52 + (i * 53) % 26) + '%)';
}
function X(t) { return L + (t - view.t0) / (view.t1 - view.t0) * PW; }
function ticks(max, n) {
  const raw = max / n; let p = 1;
  const base = raw >= 1024 ? Math.pow(1024, Math.floor(Math.log(raw) / Math.log(1024))) : 1;
  p = base; while (p * 10 <= raw) p *= 10;
  for (const m of [1, 2, 5, 10]) if (p * m >= raw) return p * m;
  return p * 10;
}
function axes(svg, ymax, title, ph = PH) {
  const Y = b => T + ph - b / ymax * ph;
  const g = el('g', {'font-size': 11, fill: '#444'}, svg);
  const ys = ticks(ymax, 6);
  for (let b = 0; b <= ymax; b += ys) {
    el('line', {x1: L, x2: L + PW, y1: Y(b), y2: Y(b), stroke: '#e4e4e4'}, g);
    el('text', {x: L - 6, y: Y(b) + 4, 'text-anchor': 'end'}, g).textContent = human(b);
  }
  const ts = Math.max(1, ticks(view.t1 - view.t0, 10));
  for (let t = Math.ceil(view.t0 / ts) * ts; t <= view.t1; t += ts) {
    el('text', {x: X(t), y: T + ph + 16, 'text-anchor': 'middle'}, g).textContent = String(t);
  }
  el('text', {x: L + PW / 2, y: T + ph + B - 4, 'text-anchor': 'middle'}, g).textContent = title;
  el('rect', {x: L, y: T, width: PW, height: ph, fill: 'none', stroke: '#999'}, svg);
  return Y;
}
function clipped(svg, id, ph = PH) {
  const defs = el('defs', {}, svg), cp = el('clipPath', {id: id}, defs);
  el('rect', {x: L, y: T, width: PW, height: ph}, cp);
  return el('g', {'clip-path': 'url(#' + id + ')'}, svg);
}
function drawMemory() {
  const svg = document.getElementById('chart');
  svg.textContent = '';
  let ymax = 1;
  for (const u of D.usage) { let s = 0; for (const v of u) s += v; ymax = Math.max(ymax, s); }
  ymax = Math.max(ymax, D.peak.bytes) * 1.06;
  const Y = axes(svg, ymax, 'time (instruction number); wheel: zoom, drag: pan, double click: reset');
  const g = clipped(svg, 'clip-memory');
  if (mode === 'allocation') {
    for (const s of D.segments) {
      if (s[2] < view.t0 || s[1] > view.t1) continue;
      const x = X(s[1]), w = Math.max(0.5, X(s[2]) - x);
      el('rect', {x: x, y: Y(s[3] + s[4]), width: w, height: Math.max(0.5, Y(s[3]) - Y(s[3] + s[4])),
                  fill: colour(s[0]), 'data-i': s[0], class: 'buf'}, g);
    }
  } else {
    const st = D.usage_step || 1;  // time steps per bar (the page's level of detail)
    for (let n = Math.max(0, Math.floor(view.t0 / st)); n < Math.min(D.usage.length, Math.ceil(view.t1 / st)); n++) {
      const t = n * st;
      let base = 0;
      D.usage[n].forEach((v, k) => {
        if (v <= 0) return;
        el('rect', {x: X(t), y: Y(base + v), width: Math.max(0.5, X(t + st) - X(t)), height: Y(base) - Y(base + v),
                    fill: 'hsl(' + HUES[k] + ',55%,60%)', 'data-kind': k, 'data-t': t, 'data-bytes': v}, g);
        base += v;
      });
    }
  }
  const px = X(D.peak.time + 0.5), py = Y(D.peak.bytes);
  el('line', {x1: px, x2: px, y1: T, y2: T + PH, stroke: '#c0392b', 'stroke-dasharray': '5,4', id: 'peak-line', 'pointer-events': 'none'}, svg);
  el('line', {x1: L, x2: L + PW, y1: py, y2: py, stroke: '#c0392b', 'stroke-width': 1, 'pointer-events': 'none'}, svg);
  const lab = el('text', {x: L + PW - 4, y: py - 5, 'text-anchor': 'end', fill: '#c0392b', 'font-size': 12, 'pointer-events': 'none'}, svg);
  lab.textContent = 'peak ' + human(D.peak.bytes) + ' at time ' + D.peak.time + ' (' + (D.schedule[D.peak.time] || '') + ')';
}
// Host memory (D.host: runs [first, last, bytes] of equal use, the peak, the transfers
// [time, bytes, to host?, instruction, source]) on the memory chart's time axis.
const HPH = 220 - T - B;
function drawHost() {
  if (!D.host) return;
  const svg = document.getElementById('host');
  svg.textContent = '';
  let ymax = Math.max(1, D.host.peak.bytes);
  for (const m of D.host.transfers) ymax = Math.max(ymax, m[1]);
  ymax *= 1.12;
  const Y = axes(svg, ymax, 'host memory over time (memory space ' + D.host.color + '); \u25b2 moved to host, \u25bc back', HPH);
  const g = clipped(svg, 'clip-host', HPH);
  for (const u of D.host.usage) {
    if (u[1] + 1 < view.t0 || u[0] > view.t1) continue;
    const x = X(u[0]), w = Math.max(0.5, X(u[1] + 1) - x);
    el('rect', {x: x, y: Y(u[2]), width: w, height: Math.max(0.5, Y(0) - Y(u[2])), fill: 'hsl(45,75%,58%)',
                'data-host': u[2], 'data-t0': u[0], 'data-t1': u[1], class: 'host'}, g);
  }
  D.host.transfers.forEach((m, k) => {
    if (m[0] < view.t0 || m[0] > view.t1) return;
    const x = X(m[0] + 0.5), up = m[2] === 1, y0 = T + 4, y1 = T + 16;
    el('line', {x1: x, x2: x, y1: y1, y2: T + HPH, stroke: up ? '#2e7d32' : '#1565c0', 'stroke-dasharray': '2,3',
                'pointer-events': 'none'}, g);
    el('path', {d: up ? 'M' + (x - 7) + ',' + y1 + 'L' + (x + 7) + ',' + y1 + 'L' + x + ',' + y0 + 'Z'
                      : 'M' + (x - 7) + ',' + y0 + 'L' + (x + 7) + ',' + y0 + 'L' + x + ',' + y1 + 'Z',
                fill: up ? '#2e7d32' : '#1565c0', 'data-transfer': k}, g);
  });
  const py = Y(D.host.peak.bytes);
  el('line', {x1: L, x2: L + PW, y1: py, y2: py, stroke: '#c0392b', 'pointer-events': 'none'}, svg);
  el('text', {x: L + PW - 4, y: py - 5, 'text-anchor': 'end', fill: '#c0392b', 'font-size': 12, 'pointer-events': 'none'}, svg)
      .textContent = 'host peak ' + human(D.host.peak.bytes) + ' at time ' + D.host.peak.time;
}
function describeTransfer(k) {
  const m = D.host.transfers[k];
  let s = '<b>' + esc(m[3]) + '</b><br>moves ' + human(m[1]) + ' (' + m[1] + ' B) ' + (m[2] === 1 ? 'to host' : 'back from host') +
          '<br>at time ' + m[0];
  if (m[4]) s += '<br>source ' + esc(m[4]);
  return s;
}
function drawHeap() {
  const svg = document.getElementById('heap');
  svg.textContent = '';
  const sel = document.getElementById('heap-select');
  const h = D.heaps[Number(sel.value || 0)];
  if (!h) { el('text', {x: L, y: 40}, svg).textContent = 'no temporary heap'; return; }
  const ymax = Math.max(1, h.size) * 1.06;
  const Y = axes(svg, ymax, 'time; y: offset in the heap (allocation ' + h.allocation + ', ' + human(h.size) + ')');
  const g = clipped(svg, 'clip-heap');
  D.buffers.forEach((b, i) => {
    if (b[6] !== h.allocation || b[2] <= 0) return;
    const x = X(b[4]), w = Math.max(0.5, X(b[5] + 1) - x);
    el('rect', {x: x, y: Y(b[7] + b[2]), width: w, height: Math.max(0.5, Y(b[7]) - Y(b[7] + b[2])), fill: colour(i),
                stroke: '#333', 'stroke-width': 0.3, 'data-i': i, class: 'buf'}, g);
  });
  const ly = Y(h.lower_bound);
  el('line', {x1: L, x2: L + PW, y1: ly, y2: ly, stroke: '#1f5fbf', 'stroke-dasharray': '6,4', 'pointer-events': 'none'}, svg);
  el('text', {x: L + PW - 4, y: ly - 4, 'text-anchor': 'end', fill: '#1f5fbf', 'pointer-events': 'none'}, svg).textContent =
      'lower bound ' + human(h.lower_bound);
}
const tip = document.getElementById('tooltip');
function describe(i) {
  const b = D.buffers[i];
  const at = t => (D.schedule[t] ? ' (' + D.schedule[t] + ')' : '');
  let s = '<b>' + esc(b[0]) + '</b><br>shape ' + esc(b[1]) + '<br>size ' + human(b[2]) + ' (' + b[2] + ' B), ' +
          D.kinds[b[3]] + '<br>live ' + b[4] + at(b[4]) + ' .. ' + b[5] + at(b[5]) + '<br>allocation ' + b[6] +
          ', offset ' + b[7];
  if (b[8]) s += '<br>source ' + esc(b[8]);
  return s;
}
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c])); }
function hover(e) {
  const t = e.target;
  let html = null;
  if (t.hasAttribute && t.hasAttribute('data-i')) html = describe(Number(t.getAttribute('data-i')));
  else if (t.hasAttribute && t.hasAttribute('data-transfer')) html = describeTransfer(Number(t.getAttribute('data-transfer')));
  else if (t.hasAttribute && t.hasAttribute('data-host')) {
    const a = Number(t.getAttribute('data-t0')), z = Number(t.getAttribute('data-t1'));
    html = '<b>host memory</b><br>' + human(Number(t.getAttribute('data-host'))) + ' in use at time ' + a +
           (a === z ? '' : ' .. ' + z) + (D.schedule[a] ? ' (' + esc(D.schedule[a]) + ')' : '');
  }
  else if (t.hasAttribute && t.hasAttribute('data-kind')) {
    const k = Number(t.getAttribute('data-kind')), when = Number(t.getAttribute('data-t'));
    html = '<b>' + D.kinds[k] + '</b><br>' + human(Number(t.getAttribute('data-bytes'))) + ' at time ' + when +
           (D.schedule[when] ? ' (' + esc(D.schedule[when]) + ')' : '');
  }
  if (html === null) { tip.style.display = 'none'; return; }
  tip.innerHTML = html;
  tip.style.display = 'block';
  tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 540) + 'px';
  tip.style.top = (e.clientY + 14) + 'px';
}
function redraw() { drawMemory(); drawHost(); drawHeap(); }
function zoomable(svg) {
  svg.addEventListener('mousemove', hover);
  svg.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  svg.addEventListener('wheel', e => {
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    const at = view.t0 + (e.clientX - r.left - L) / PW * (view.t1 - view.t0);
    const f = e.deltaY < 0 ? 0.8 : 1.25;
    let t0 = at - (at - view.t0) * f, t1 = at + (view.t1 - at) * f;
    if (t1 - t0 < 2) return;
    view.t0 = Math.max(0, t0); view.t1 = Math.min(D.horizon, t1);
    redraw();
  }, {passive: false});
  let drag = null;
  svg.addEventListener('mousedown', e => { drag = {x: e.clientX, t0: view.t0, t1: view.t1}; });
  window.addEventListener('mouseup', () => { drag = null; });
  svg.addEventListener('mousemove', e => {
    if (!drag || !(e.buttons & 1)) return;
    const dt = (e.clientX - drag.x) / PW * (drag.t1 - drag.t0);
    const span = drag.t1 - drag.t0;
    view.t0 = Math.min(Math.max(0, drag.t0 - dt), D.horizon - span); view.t1 = view.t0 + span;
    redraw();
  });
  svg.addEventListener('dblclick', () => { view.t0 = 0; view.t1 = D.horizon; redraw(); });
}
function table() {
  const tb = document.querySelector('#top tbody');
  D.top.forEach((i, n) => {
    const b = D.buffers[i], tr = document.createElement('tr');
    const cells = [n + 1, human(b[2]), D.kinds[b[3]], b[0], b[1], b[4] + ' .. ' + b[5], b[8]];
    cells.forEach((c, k) => {
      const td = document.createElement('td');
      td.textContent = String(c);
      if (k < 2) td.className = 'num';
      tr.appendChild(td);
    });
    tr.addEventListener('mouseenter', () => {
      document.querySelectorAll('[data-i="' + i + '"]').forEach(r => r.classList.add('hl'));
    });
    tr.addEventListener('mouseleave', () => { document.querySelectorAll('.hl').forEach(r => r.classList.remove('hl')); });
    tb.appendChild(tr);
  });
}
function tab(name) {
  for (const t of ['memory', 'heap']) {
    document.getElementById('panel-' + t).classList.toggle('hidden', t !== name);
    document.getElementById('tab-' + t).classList.toggle('on', t === name);
  }
}
function selftest() {
  // Hover the largest buffer live at the peak where it is on screen, as a person would.
  const out = {errors: errors, chart_rects: document.querySelectorAll('#chart rect.buf').length,
               heap_rects: document.querySelectorAll('#heap rect.buf').length,
               table_rows: document.querySelectorAll('#top tbody tr').length};
  const heapTab = location.hash.indexOf('heap') >= 0;
  if (D.host && !heapTab) {
    // Host memory: its chart drawn, and hovering the first transfer marker names its instruction.
    out.host_rects = document.querySelectorAll('#host rect.host').length;
    out.host_transfers = document.querySelectorAll('#host [data-transfer]').length;
    const mark = document.querySelector('#host [data-transfer]');
    if (mark) {
      const b = mark.getBoundingClientRect(), cx = b.left + b.width / 2, cy = b.top + b.height * 0.6;
      const hit = document.elementFromPoint(cx, cy);
      if (hit) hit.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: cx, clientY: cy}));
      out.host_expected = D.host.transfers[Number(mark.getAttribute('data-transfer'))][3];
      out.host_tooltip = tip.style.display === 'block' ? tip.textContent : '';
    }
    out.host_ok = out.host_rects > 0 && out.host_transfers === D.host.transfers.filter(m => m[0] >= 0).length &&
                  (!mark || out.host_tooltip.indexOf(out.host_expected) >= 0);
  }
  let i = D.top.length ? D.top[0] : -1;
  if (heapTab) {  // the largest buffer of the first heap
    i = -1;
    const a = D.heaps.length ? D.heaps[0].allocation : null;
    D.buffers.forEach((b, k) => { if (b[6] === a && b[2] > 0 && (i < 0 || b[2] > D.buffers[i][2])) i = k; });
  }
  const rects = Array.from(document.querySelectorAll((heapTab ? '#heap' : '#chart') + ' rect[data-i="' + i + '"]'));
  let target = null;
  if (!heapTab) {
    const px = document.getElementById('peak-line').getBoundingClientRect().left;
    target = rects.find(r => { const b = r.getBoundingClientRect(); return b.left <= px && px <= b.right; }) || rects[0];
  } else {
    target = rects[0];
  }
  if (target) {
    // Where the buffer shows: on the peak line in the memory chart; in the heap, the first
    // of a few points across its rectangle that the browser's hit test gives to it (a buffer
    // that overwrites its operand in place covers the operand's last step).
    const b = target.getBoundingClientRect();
    const cy = b.top + b.height / 2;
    let cx = heapTab ? b.left + b.width / 2 : document.getElementById('peak-line').getBoundingClientRect().left;
    if (heapTab) {
      for (const f of [0.5, 0.25, 0.1, 0.75, 0.9]) {
        const h = document.elementFromPoint(b.left + b.width * f, cy);
        if (h === target) { cx = b.left + b.width * f; break; }
      }
    }
    const hit = document.elementFromPoint(cx, cy);
    out.hit = hit && hit.getAttribute ? hit.getAttribute('data-i') : null;
    if (hit) hit.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: cx, clientY: cy}));
  }
  out.expected = i >= 0 ? D.buffers[i][0] : null;
  out.tooltip_visible = tip.style.display === 'block';
  out.tooltip = tip.textContent;
  // Zoom with the wheel at the middle of the plot, then pan by dragging to the left.
  const svg = document.getElementById(heapTab ? 'heap' : 'chart'), r = svg.getBoundingClientRect();
  const span0 = view.t1 - view.t0, mx = r.left + L + PW / 2, my = r.top + T + PH / 2;
  svg.dispatchEvent(new WheelEvent('wheel', {bubbles: true, cancelable: true, clientX: mx, clientY: my, deltaY: -120}));
  svg.dispatchEvent(new WheelEvent('wheel', {bubbles: true, cancelable: true, clientX: mx, clientY: my, deltaY: -120}));
  out.zoomed = view.t1 - view.t0 < span0;
  const t0 = view.t0;
  svg.dispatchEvent(new MouseEvent('mousedown', {bubbles: true, clientX: mx, clientY: my, buttons: 1}));
  svg.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: mx - 100, clientY: my, buttons: 1}));
  window.dispatchEvent(new MouseEvent('mouseup', {bubbles: true, clientX: mx - 100, clientY: my}));
  out.panned = view.t0 > t0;
  out.view = [view.t0, view.t1];
  out.ok = out.errors.length === 0 && out.chart_rects > 0 && out.table_rows > 0 && out.tooltip_visible &&
           out.expected !== null && out.tooltip.indexOf(out.expected) >= 0 && out.hit === String(i) &&
           out.zoomed && out.panned && (out.host_ok === undefined || out.host_ok);
  document.getElementById('selftest').textContent = 'SELFTEST ' + JSON.stringify(out);
}
function main() {
  document.getElementById('mode').addEventListener('change', e => { mode = e.target.value; drawMemory(); });
  document.getElementById('reset').addEventListener('click', () => { view.t0 = 0; view.t1 = D.horizon; redraw(); });
  document.getElementById('tab-memory').addEventListener('click', () => tab('memory'));
  document.getElementById('tab-heap').addEventListener('click', () => tab('heap'));
  const sel = document.getElementById('heap-select');
  D.heaps.forEach((h, k) => {
    const o = document.createElement('option');
    o.value = k; o.textContent = 'allocation ' + h.allocation + ' (memory space ' + h.color + ', ' + human(h.size) + ')';
    sel.appendChild(o);
  });
  sel.addEventListener('change', drawHeap);
  zoomable(document.getElementById('chart'));
  zoomable(document.getElementById('heap'));
  if (D.host) {
    document.getElementById('host-box').classList.remove('hidden');
    zoomable(document.getElementById('host'));
  }
  const leg = document.getElementById('legend');
  D.kinds.forEach((k, n) => {
    const s = document.createElement('span');
    s.innerHTML = '<i style="background:hsl(' + HUES[n] + ',55%,60%)"></i>' + k;
    leg.appendChild(s);
  });
  redraw();
  table();
  if (location.hash.indexOf('heap') >= 0) tab('heap');
  if (location.hash.indexOf('selftest') >= 0) selftest();
}
try { main(); } catch (e) { errors.push(String(e && e.stack || e)); document.getElementById('selftest').textContent = 'SELFTEST ' + JSON.stringify({ok: false, errors: errors}); }
)JS";


/// Host memory for the page's second chart, when anything lives there or moves there: runs of
/// equal use [first, last, bytes] (times with none left out), the peak, and the transfers
/// [time, bytes, 1 to host / 0 back, instruction, source] that have a step in the schedule.
inline void page_host_data(json_writer& w, const report::memory_report& r) {
  const auto& t = r.timeline;
  if (r.host_peak() <= 0 && r.transfers.empty()) return;
  w.key("host");
  w.begin_object();
  w.field("color", t.host_color);
  w.key("peak");
  w.begin_object();
  const auto* host = r.host_space();
  w.field("time", host != nullptr ? host->time : 0);
  w.field("bytes", r.host_peak());
  w.end_object();
  w.key("usage");
  w.begin_array();
  const auto usage = report::memory_space_usage(t, t.host_color);
  for (std::size_t x = 0; x < usage.size();) {
    std::size_t y = x;
    while (y + 1 < usage.size() && usage[y + 1] == usage[x]) ++y;
    if (usage[x] > 0) {
      w.element(std::vector<std::int64_t>{static_cast<std::int64_t>(x), static_cast<std::int64_t>(y), usage[x]});
    }
    x = y + 1;
  }
  w.end_array();
  w.key("transfers");
  w.begin_array();
  for (const auto& m : r.transfers) {
    if (m.time < 0) continue;
    w.next();
    w.begin_array();
    w.element(m.time);
    w.element(m.bytes);
    w.element(m.to_color == t.host_color ? 1 : 0);
    w.element(m.instruction);
    w.element(report::source_text(m.source));
    w.end_array();
  }
  w.end_array();
  w.end_object();
}

/// Above these the page keeps a level of detail (programs of 10^5-10^6 buffers gave pages of
/// 100 MB that no browser draws): the buffers listed and drawn, and the bars of the kind view.
inline constexpr std::size_t page_max_buffers = 20000;
inline constexpr std::size_t page_max_bars = 20000;

/// What the page shows of a large program: the `page_max_buffers` largest buffers (bytes x
/// live steps) and every buffer of its peak table; the kind view in bars of `step` time steps,
/// each its fullest step.
struct page_detail {
  std::vector<std::size_t> buffers;   ///< timeline buffers shown, in timeline order
  std::vector<std::int64_t> index;    ///< timeline buffer -> its place in `buffers`, or -1
  std::int64_t step = 1;              ///< time steps per bar of the kind view
  std::size_t all = 0;                ///< buffers of the timeline

  [[nodiscard]] bool reduced() const noexcept { return buffers.size() < all || step > 1; }
};

[[nodiscard]] inline page_detail page_detail_of(const report::memory_report& r, std::size_t top) {
  const auto& t = r.timeline;
  page_detail d;
  d.all = t.buffers.size();
  std::vector<char> keep(t.buffers.size(), 1);
  if (t.buffers.size() > page_max_buffers) {
    std::vector<std::size_t> order(t.buffers.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto weight = [&](std::size_t i) {
      const auto& b = t.buffers[i];
      return static_cast<long double>(b.size) * static_cast<long double>(b.end - b.start + 1);
    };
    std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(page_max_buffers), order.end(),
                     [&](std::size_t a, std::size_t b) { return weight(a) != weight(b) ? weight(a) > weight(b) : a < b; });
    std::fill(keep.begin(), keep.end(), 0);
    for (std::size_t k = 0; k < page_max_buffers; ++k) keep[order[k]] = 1;
    for (std::size_t k = 0; k < r.peak.live.size() && k < top; ++k) keep[r.peak.live[k]] = 1;
  }
  d.index.assign(t.buffers.size(), -1);
  for (std::size_t i = 0; i < t.buffers.size(); ++i) {
    if (keep[i]) {
      d.index[i] = static_cast<std::int64_t>(d.buffers.size());
      d.buffers.push_back(i);
    }
  }
  const auto horizon = static_cast<std::size_t>(std::max<std::int64_t>(t.horizon(), 0));
  if (horizon > page_max_bars) d.step = static_cast<std::int64_t>((horizon + page_max_bars - 1) / page_max_bars);
  return d;
}

/// The instruction at each time step: all of them, or at a level of detail only the steps the
/// page names (the peak, each shown buffer's first and last, each bar's first), as an object.
inline void page_schedule(json_writer& w, const report::memory_report& r, const page_detail& d) {
  const auto& t = r.timeline;
  if (!d.reduced()) {
    w.field("schedule", t.schedule);
    return;
  }
  std::vector<std::size_t> named{static_cast<std::size_t>(std::max<std::int64_t>(r.peak.time, 0))};
  for (const auto i : d.buffers) {
    named.push_back(static_cast<std::size_t>(std::max<std::int64_t>(t.buffers[i].start, 0)));
    named.push_back(static_cast<std::size_t>(std::max<std::int64_t>(t.buffers[i].end, 0)));
  }
  for (std::size_t s = 0; s < t.schedule.size(); s += static_cast<std::size_t>(d.step)) named.push_back(s);
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  w.key("schedule");
  w.begin_object();
  for (const auto s : named) {
    if (s < t.schedule.size()) w.field(std::to_string(s), t.schedule[s]);
  }
  w.end_object();
}

/// Bytes by kind at each time step, or one bar per `d.step` steps: the fullest of them.
inline void page_usage(json_writer& w, const report::memory_timeline& t, const page_detail& d) {
  const auto usage = report::usage_over_time(t);
  if (d.step <= 1) {
    w.field("usage", usage);
    return;
  }
  w.field("usage_step", d.step);
  w.key("usage");
  w.begin_array();
  const auto step = static_cast<std::size_t>(d.step);
  for (std::size_t b = 0; b < usage.size(); b += step) {
    std::size_t fullest = b;
    std::int64_t most = -1;
    for (std::size_t s = b; s < std::min(usage.size(), b + step); ++s) {
      std::int64_t sum = 0;
      for (const auto v : usage[s]) sum += v;
      if (sum > most) {
        most = sum;
        fullest = s;
      }
    }
    w.element(usage[fullest]);
  }
  w.end_array();
}

/// The page's data: what its script draws (compact JSON), at the level of detail `d`.
[[nodiscard]] inline std::string page_data(const report::memory_report& r, std::size_t top, const page_detail& d) {
  const auto& t = r.timeline;
  json_writer w;
  w.begin_object();
  w.field("module", r.module);
  w.field("origin", r.description);
  w.field("file", r.file);
  w.field("horizon", t.horizon());
  page_schedule(w, r, d);
  w.key("peak");
  w.begin_object();
  w.field("time", r.peak.time);
  w.field("bytes", r.peak.bytes);
  w.end_object();
  w.key("kinds");
  w.begin_array();
  for (std::size_t k = 0; k < report::buffer_kind_count; ++k) w.element(report::name_of(static_cast<report::buffer_kind>(k)));
  w.end_array();
  w.key("buffers");
  w.begin_array();
  for (const auto i : d.buffers) {
    const auto& b = t.buffers[i];
    w.next();
    w.begin_array();
    w.element(b.name);
    w.element(b.shape);
    w.element(b.size);
    w.element(static_cast<int>(b.kind));
    w.element(b.start);
    w.element(b.end);
    w.element(b.allocation);
    w.element(b.offset);
    w.element(report::source_text(b.source));
    w.end_array();
  }
  w.end_array();
  w.key("segments");
  w.begin_array();
  for (const auto& s : report::stacked_segments(t)) {
    const auto shown = d.index[s.buffer];
    if (shown >= 0) w.element(std::vector<std::int64_t>{shown, s.begin, s.end, s.base, s.bytes});
  }
  w.end_array();
  page_usage(w, t, d);
  w.key("heaps");
  w.begin_array();
  for (const auto& h : r.heaps) {
    w.next();
    w.begin_object();
    w.field("allocation", h.allocation);
    w.field("size", h.size);
    w.field("lower_bound", h.lower_bound);
    w.field("color", h.color);
    w.end_object();
  }
  w.end_array();
  w.key("top");
  w.begin_array();
  for (std::size_t k = 0; k < r.peak.live.size() && k < top; ++k) w.element(d.index[r.peak.live[k]]);
  w.end_array();
  w.field("live_at_peak", r.peak.live.size());
  page_host_data(w, r);
  const auto& st = r.stats;
  w.key("stats");
  w.begin_object();
  w.field("argument", st.argument_size_in_bytes);
  w.field("output", st.output_size_in_bytes);
  w.field("alias", st.alias_size_in_bytes);
  w.field("temp", st.temp_size_in_bytes);
  w.field("total", st.total_allocation_bytes);
  w.end_object();
  if (!r.fragmentation_at_peak.empty()) {
    const auto& f = r.fragmentation_at_peak.front();
    w.key("fragmentation");
    w.begin_object();
    w.field("heap_size", f.heap_size);
    w.field("wasted", f.wasted);
    w.field("largest_hole", f.largest_hole);
    w.end_object();
  }
  w.end_object();
  return w.take();
}

/// The facts above the chart, with what the level of detail `d` left out.
[[nodiscard]] inline std::string page_facts(const report::memory_report& r, const page_detail& d) {
  const auto& st = r.stats;
  std::string facts = "<span>peak <b>" + svg_escape(bytes_text(r.peak.bytes)) + "</b> at time " +
                      std::to_string(r.peak.time) + " (" + svg_escape(r.instruction_at(r.peak.time)) +
                      ")</span><span>argument " + human_bytes(st.argument_size_in_bytes) + "</span><span>output " +
                      human_bytes(st.output_size_in_bytes) + "</span><span>temp " + human_bytes(st.temp_size_in_bytes) +
                      "</span><span>all allocations " + human_bytes(st.total_allocation_bytes) + "</span>";
  if (!r.fragmentation_at_peak.empty()) {
    const auto& f = r.fragmentation_at_peak.front();
    facts += "<span>heap unused at the peak " + human_bytes(f.wasted) + ", largest free hole " + human_bytes(f.largest_hole) +
             "</span>";
  }
  // Host memory apart from the device's (the first chart is device memory), and what moves between.
  for (const auto& m : r.memory_spaces) {
    if (m.host && m.bytes > 0) {
      facts += "<span>host memory peak <b>" + human_bytes(m.bytes) + "</b> at time " + std::to_string(m.time) + "</span>";
    }
  }
  if (!r.transfers.empty()) {
    facts += "<span>transfers " + human_bytes(r.transferred_bytes(true)) + " to host, " +
             human_bytes(r.transferred_bytes(false)) + " back</span>";
  }
  if (d.reduced()) {
    facts += "<span id=\"detail\">level of detail: the " + std::to_string(d.buffers.size()) + " largest of " +
             std::to_string(d.all) + " buffers (bytes &times; live steps) listed and drawn";
    if (d.step > 1) facts += "; the kind view in bars of " + std::to_string(d.step) + " steps, each its fullest";
    facts += "</span>";
  }
  return facts;
}

inline constexpr const char* page_body = R"(<div class="tabs"><button id="tab-memory" class="on">Memory over time</button><button id="tab-heap">Temporary heap</button></div>
<div class="panel" id="panel-memory">
<div class="controls"><label>stack <select id="mode"><option value="allocation">by allocation (each buffer)</option><option value="kind">by kind</option></select></label><button id="reset">reset zoom</button> <span class="legend" id="legend"></span></div>
<svg id="chart" width="1100" height="440" viewBox="0 0 1100 440"></svg>
<div id="host-box" class="hidden"><svg id="host" width="1100" height="220" viewBox="0 0 1100 220"></svg></div>
<table id="top"><thead><tr><th>#</th><th>size</th><th>kind</th><th>buffer</th><th>shape</th><th>live</th><th>source</th></tr></thead><tbody></tbody></table>
<p class="sub" id="top-note"></p>
</div>
<div class="panel hidden" id="panel-heap">
<div class="controls"><label>heap <select id="heap-select"></select></label></div>
<svg id="heap" width="1100" height="440" viewBox="0 0 1100 440"></svg>
</div>
<div id="tooltip"></div>
<pre id="selftest"></pre>
)";

}  // namespace detail

/// The self-contained interactive page of `r`, its table listing the `top` largest buffers live
/// at the peak.
[[nodiscard]] inline std::string report_page(const report::memory_report& r, std::size_t top = 20) {
  const auto lod = detail::page_detail_of(r, top);
  const std::string json = detail::page_data(r, top, lod);
  // Inside <script>, "</script" ends the element and "<!--" opens a comment that can swallow the
  // page's own script: no '<', '>' or '&' may appear raw. They occur only inside JSON strings,
  // where their six-character JSON escapes mean the same. One pass, not an insert per match.
  std::string data;
  data.reserve(json.size() + json.size() / 64);
  for (const char c : json) {
    if (c == '<') data += "\\u003c";
    else if (c == '>') data += "\\u003e";
    else if (c == '&') data += "\\u0026";
    else data += c;
  }
  const auto module = detail::svg_escape(r.module);
  std::string page;
  page += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  page += "<title>xlamem: memory of " + module + "</title>\n<style>" + detail::page_style + "</style></head>\n<body>\n";
  page += "<h1>Memory of " + module + "</h1>\n<p class=\"sub\">" + detail::svg_escape(r.description) + ", from " +
          detail::svg_escape(r.file) + "</p>\n<p class=\"facts\">" + detail::page_facts(r, lod) + "</p>\n";
  page += detail::page_body;
  page += "<script type=\"application/json\" id=\"data\">" + data + "</script>\n<script>" + detail::page_script + "</script>\n";
  page += "</body></html>\n";
  return page;
}

/// The whole device memory of `r` over time as a static SVG: every buffer stacked by kind and
/// allocation (`report::stacked_segments`), the peak marked.
[[nodiscard]] inline std::string report_svg(const report::memory_report& r) {
  std::vector<layout_rect> rects;
  const auto& t = r.timeline;
  for (const auto& s : report::stacked_segments(t)) {
    const auto& b = t.buffers[s.buffer];
    rects.push_back({s.begin, s.end, s.base, s.bytes, b.name + " (" + std::string(report::name_of(b.kind)) + ", " + b.shape + ")"});
  }
  layout_svg_options o;
  o.title = r.module + ": all device memory over time, stacked by kind and allocation; peak " + human_bytes(r.peak.bytes) +
            " at time " + std::to_string(r.peak.time);
  o.peak = r.peak.bytes;
  return layout_svg(rects, o);
}

}  // namespace xlamem
