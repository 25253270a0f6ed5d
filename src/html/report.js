/* report.js - the HTML report's script (embedded into the page by
 * src/html/embed.py).  Reads the JSON data block and makes the page
 * interactive: a collapsible, sortable, searchable call tree; a flame graph
 * (click to zoom, search); a timeline on a canvas that draws the
 * precomputed level of detail for the visible window only; the ranks x
 * regions heatmap.  Without JavaScript the page keeps its static tables.
 * State is exposed on window.scopeprofReport for tests and the curious. */
(function () {
  'use strict';

  var data = JSON.parse(document.getElementById('sp-data').textContent);
  var run = data.runs[0];
  var names = run.regions.names;
  var colours = run.regions.colours;
  var state = { tree: {}, flame: {}, timeline: {} };
  window.scopeprofReport = state;

  /* ---- helpers -------------------------------------------------------------- */

  /* Same text as the C side's sp_format_duration. */
  function fmt(ns) {
    if (ns === null || ns === undefined || ns < 0) return '-';
    if (ns < 1000) return Math.round(ns) + ' ns';
    var units = [[1e3, '\u00b5s'], [1e6, 'ms'], [1e9, 's']];
    for (var u = 0; u < units.length; u++) {
      var v = ns / units[u][0];
      var last = u === units.length - 1;
      if (v < 9.995) return v.toFixed(2) + ' ' + units[u][1];
      if (v < 99.95) return v.toFixed(1) + ' ' + units[u][1];
      if (v < 999.5 || last) return v.toFixed(0) + ' ' + units[u][1];
    }
    return '-';
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  var tip = el('div', { class: 'tooltip', id: 'tooltip' });
  document.body.appendChild(tip);
  function showTip(ev, text) {
    tip.textContent = text;
    tip.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + 470 > window.innerWidth) x = Math.max(0, ev.clientX - 470);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }

  function regexOf(text) {
    if (!text) return null;
    try { return new RegExp(text, 'i'); } catch (e) {
      return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    }
  }

  function canvasFor(container, cssHeight) {
    var c = container.querySelector('canvas');
    if (!c) { c = el('canvas'); container.appendChild(c); }
    var ratio = window.devicePixelRatio || 1;
    var w = Math.max(300, container.clientWidth);
    c.width = Math.round(w * ratio);
    c.height = Math.round(cssHeight * ratio);
    c.style.width = w + 'px';
    c.style.height = cssHeight + 'px';
    var g = c.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    return { canvas: c, g: g, width: w, height: cssHeight };
  }

  function fitText(g, text, width) {
    if (width < 18) return '';
    if (g.measureText(text).width <= width) return text;
    var lo = 0, hi = text.length;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (g.measureText(text.slice(0, mid) + '..').width <= width) lo = mid; else hi = mid - 1;
    }
    return lo >= 2 ? text.slice(0, lo) + '..' : '';
  }

  /* ---- the call tree (shared by the tree table and the flame graph) ---------- */

  var T = run.tree;
  var N = T.parent.length;
  var kids = new Array(N), roots = [];
  for (var i = 0; i < N; i++) kids[i] = [];
  for (i = 0; i < N; i++) (T.parent[i] < 0 ? roots : kids[T.parent[i]]).push(i);
  var depthOf = new Int32Array(N);
  for (i = 0; i < N; i++) depthOf[i] = T.parent[i] < 0 ? 0 : depthOf[T.parent[i]] + 1;
  var rootTotal = 0;
  roots.forEach(function (r) { rootTotal += T.incl[r]; });

  function site(i) {
    var f = T.file[i];
    if (!f) return '';
    var b = f.lastIndexOf('/');
    return (b >= 0 ? f.slice(b + 1) : f) + (T.line[i] >= 0 ? ':' + T.line[i] : '');
  }
  function value(i, key) {
    switch (key) {
      case 'name': return names[T.region[i]];
      case 'mean': return T.calls[i] ? T.incl[i] / T.calls[i] : -1;
      case 'site': return site(i);
      default: return T[key][i];
    }
  }
  function pathOf(i) {
    var p = [];
    for (; i >= 0; i = T.parent[i]) p.push(names[T.region[i]]);
    return p.reverse().join(' > ');
  }

  /* ---- call tree table -------------------------------------------------------- */

  function setupTree() {
    var table = document.getElementById('tree-table');
    if (!table) return;
    var tbody = table.tBodies[0];
    var expanded = new Uint8Array(N);
    var matches = null;
    var sortKey = 'incl', sortAsc = false;
    // Open what matters: paths above 5 % of the time, and the first 2 levels.
    for (var i = 0; i < N; i++)
      if (depthOf[i] < 1 || (rootTotal > 0 && T.incl[i] >= 0.05 * rootTotal)) expanded[i] = 1;

    function sorted(list) {
      var out = list.slice();
      out.sort(function (a, b) {
        var x = value(a, sortKey), y = value(b, sortKey);
        var c = typeof x === 'string' ? x.localeCompare(y) : x - y;
        return sortAsc ? c : -c;
      });
      return out;
    }

    function row(i) {
      var tr = el('tr', { 'data-node': i });
      var name = el('td', { class: 'name' });
      name.style.paddingLeft = (0.3 + 1.2 * Math.min(depthOf[i], 30)) + 'em';
      var tw = el('span', { class: 'twisty' }, kids[i].length ? (expanded[i] ? '\u25be' : '\u25b8') : '');
      name.appendChild(tw);
      name.appendChild(document.createTextNode(names[T.region[i]]));
      tr.appendChild(name);
      var incl = el('td');
      var bar = el('span', { class: 'bar' });
      bar.style.width = Math.round(40 * (rootTotal > 0 ? T.incl[i] / rootTotal : 0)) + 'px';
      incl.appendChild(bar);
      incl.appendChild(document.createTextNode(fmt(T.incl[i])));
      tr.appendChild(incl);
      tr.appendChild(el('td', null, fmt(T.excl[i])));
      tr.appendChild(el('td', null, String(T.calls[i])));
      tr.appendChild(el('td', null, fmt(T.calls[i] ? Math.round(T.incl[i] / T.calls[i]) : -1)));
      tr.appendChild(el('td', null, fmt(T.min[i])));
      tr.appendChild(el('td', null, fmt(T.max[i])));
      tr.appendChild(el('td', null, fmt(T.p95[i])));
      tr.appendChild(el('td', { class: 'site' }, site(i)));
      if (matches && matches[i]) tr.className = 'match';
      return tr;
    }

    function render() {
      var frag = document.createDocumentFragment();
      var stack = sorted(roots).reverse(), count = 0;
      while (stack.length && count < 5000) {
        var n = stack.pop();
        frag.appendChild(row(n));
        count++;
        if (expanded[n]) {
          var ks = sorted(kids[n]);
          for (var k = ks.length - 1; k >= 0; k--) stack.push(ks[k]);
        }
      }
      if (stack.length)
        frag.appendChild(el('tr', { class: 'other' }, '')).appendChild(
          el('td', { colspan: 9 }, '(more rows: collapse branches or search)'));
      tbody.textContent = '';
      tbody.appendChild(frag);
      state.tree.rows = count;
      var ths = table.tHead.rows[0].cells;
      for (var c = 0; c < ths.length; c++) {
        var key = ths[c].getAttribute('data-key');
        ths[c].className = key === sortKey ? (sortAsc ? 'sorted asc' : 'sorted') : '';
      }
    }

    tbody.addEventListener('click', function (ev) {
      var tr = ev.target.closest('tr[data-node]');
      if (!tr) return;
      var n = +tr.getAttribute('data-node');
      if (!kids[n].length) return;
      expanded[n] = expanded[n] ? 0 : 1;
      render();
    });
    table.tHead.addEventListener('click', function (ev) {
      var th = ev.target.closest('th[data-key]');
      if (!th) return;
      var key = th.getAttribute('data-key');
      if (key === sortKey) sortAsc = !sortAsc; else { sortKey = key; sortAsc = key === 'name' || key === 'site'; }
      render();
    });

    var controls = document.getElementById('tree-controls');
    controls.className = 'controls';
    var search = el('input', { type: 'search', id: 'tree-search', placeholder: 'search regions (regular expression)' });
    var expandAll = el('button', { id: 'tree-expand' }, 'expand all');
    var collapseAll = el('button', { id: 'tree-collapse' }, 'collapse all');
    var status = el('span', { class: 'status', id: 'tree-status' });
    controls.appendChild(search);
    controls.appendChild(expandAll);
    controls.appendChild(collapseAll);
    controls.appendChild(status);
    expandAll.addEventListener('click', function () { expanded.fill(1); render(); });
    collapseAll.addEventListener('click', function () { expanded.fill(0); render(); });
    search.addEventListener('input', function () {
      var re = regexOf(search.value.trim());
      if (!re) { matches = null; status.textContent = ''; render(); return; }
      matches = new Uint8Array(N);
      var count = 0;
      for (var i = 0; i < N; i++)
        if (re.test(names[T.region[i]])) {
          matches[i] = 1;
          count++;
          for (var p = T.parent[i]; p >= 0; p = T.parent[p]) expanded[p] = 1;
        }
      status.textContent = count + ' matching call path' + (count === 1 ? '' : 's');
      state.tree.matches = count;
      render();
    });
    state.tree.toggle = function (n) { expanded[n] = expanded[n] ? 0 : 1; render(); };
    render();
  }

  /* ---- flame graph -------------------------------------------------------------- */

  function setupFlame() {
    var box = document.getElementById('flame');
    if (!box || !N) return;
    var ROW = 17;
    var controls = el('div', { class: 'controls' });
    var search = el('input', { type: 'search', id: 'flame-search', placeholder: 'search (regular expression)' });
    var reset = el('button', { id: 'flame-reset' }, 'reset zoom');
    var status = el('span', { class: 'status', id: 'flame-status' });
    controls.appendChild(search);
    controls.appendChild(reset);
    controls.appendChild(status);
    box.appendChild(controls);
    var view = el('div', { class: 'viewport', id: 'flame-view' });
    box.appendChild(view);
    var maxDepth = 0;
    for (var i = 0; i < N; i++) if (depthOf[i] > maxDepth) maxDepth = depthOf[i];
    var shown = Math.min(maxDepth + 1, 120);
    var focus = -1, re = null, boxes = [];
    // Children in the same order as `scopeprof flame`: first seen first.
    function draw() {
      var cv = canvasFor(view, shown * ROW + 4);
      var g = cv.g, W = cv.width;
      g.clearRect(0, 0, W, cv.height);
      g.font = '11px monospace';
      g.textBaseline = 'middle';
      boxes = [];
      var total = 0, top = roots, base = 0;
      if (focus >= 0) {
        // ancestors of the focus span the width; the focus fills it
        var chain = [];
        for (var p = focus; p >= 0; p = T.parent[p]) chain.push(p);
        chain.reverse();
        top = [focus];
        base = chain.length - 1;
        for (var a = 0; a < chain.length - 1; a++) drawFrame(g, chain[a], 0, W, a, cv.height, true);
      }
      top.forEach(function (r) { total += T.incl[r]; });
      var scale = total > 0 ? W / total : 0;
      var matched = 0;
      var stack = [];
      var x = 0;
      top.forEach(function (r) { stack.push([r, x, base]); x += T.incl[r] * scale; });
      while (stack.length) {
        var item = stack.pop(), n = item[0], nx = item[1], d = item[2];
        var w = T.incl[n] * scale;
        if (w < 0.5 || d >= shown) continue;
        if (drawFrame(g, n, nx, w, d, cv.height, false)) matched++;
        var cx = nx;
        for (var k = 0; k < kids[n].length; k++) {
          var c = kids[n][k];
          stack.push([c, cx, d + 1]);
          cx += T.incl[c] * scale;
        }
      }
      state.flame.focus = focus;
      state.flame.matched = re ? countMatches() : 0;
      status.textContent = re ? state.flame.matched + ' matching frame' + (state.flame.matched === 1 ? '' : 's') +
        ' (' + matched + ' visible)' : (focus >= 0 ? 'zoomed on ' + pathOf(focus) : 'click a frame to zoom');
    }
    function countMatches() {
      var c = 0;
      for (var i = 0; i < N; i++) if (re.test(names[T.region[i]])) c++;
      return c;
    }
    function drawFrame(g, n, x, w, d, H, ancestor) {
      var y = H - (d + 1) * ROW - 2;
      var hit = re && re.test(names[T.region[n]]);
      g.fillStyle = hit ? '#e600e6' : colours[T.region[n]];
      g.globalAlpha = ancestor ? 0.6 : 1;
      g.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);
      g.globalAlpha = 1;
      var label = fitText(g, names[T.region[n]], w - 6);
      if (label) { g.fillStyle = '#000'; g.fillText(label, x + 3, y + ROW / 2); }
      boxes.push([x, y, w, n]);
      return hit;
    }
    function at(ev) {
      var r = view.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
      for (var b = boxes.length - 1; b >= 0; b--) {
        var q = boxes[b];
        if (px >= q[0] && px < q[0] + q[2] && py >= q[1] && py < q[1] + ROW) return q[3];
      }
      return -1;
    }
    view.addEventListener('click', function (ev) { var n = at(ev); if (n >= 0) { focus = n; draw(); } });
    view.addEventListener('mousemove', function (ev) {
      var n = at(ev);
      if (n < 0) { hideTip(); return; }
      showTip(ev, pathOf(n) + '\ncalls ' + T.calls[n] + ', inclusive ' + fmt(T.incl[n]) +
        ' (' + (rootTotal ? (100 * T.incl[n] / rootTotal).toFixed(1) : '-') + ' %), exclusive ' +
        fmt(T.excl[n]) + (site(n) ? '\n' + site(n) : ''));
    });
    view.addEventListener('mouseleave', hideTip);
    reset.addEventListener('click', function () { focus = -1; draw(); });
    search.addEventListener('input', function () { re = regexOf(search.value.trim()); draw(); });
    window.addEventListener('resize', draw);
    state.flame.zoom = function (n) { focus = n; draw(); };
    state.flame.search = function (text) { search.value = text; re = regexOf(text); draw(); };
    draw();
  }

  /* ---- timeline ------------------------------------------------------------------- */

  function setupTimeline() {
    var box = document.getElementById('timeline-view');
    var TL = run.timeline;
    if (!box || !TL || !TL.lanes.length) {
      if (box) box.appendChild(el('p', { class: 'note' }, 'No timeline: no call could be placed.'));
      return;
    }
    var lanes = TL.lanes, levels = TL.levels, span = TL.span, off = TL.offset || 0;
    function at(t) { return fmt(t + off); } // times shown from the run start
    var rows = 0;
    lanes.forEach(function (l) { rows += l.depth + 1; });
    var ROW = Math.max(3, Math.min(14, Math.floor(9000 / Math.max(1, rows))));
    var LABEL = ROW >= 10 ? 14 : 0;
    var y = 0;
    lanes.forEach(function (l) { l.y = y; y += LABEL + l.depth * ROW + 4; });
    var height = y + 18;
    var controls = el('div', { class: 'controls' });
    var zin = el('button', { id: 'timeline-zoom-in' }, 'zoom in');
    var zout = el('button', { id: 'timeline-zoom-out' }, 'zoom out');
    var reset = el('button', { id: 'timeline-reset' }, 'reset');
    var status = el('span', { class: 'status', id: 'timeline-status' });
    [zin, zout, reset, status].forEach(function (c) { controls.appendChild(c); });
    controls.appendChild(el('span', { class: 'legend' },
      'wheel: zoom, drag: pan; faint cells stand for calls too short to draw one by one'));
    box.appendChild(controls);
    var view = el('div', { class: 'viewport', id: 'timeline-canvas' });
    box.appendChild(view);
    var t0 = 0, t1 = span;
    var decoded = {};

    /* Lazily decoded columns: exact calls of a lane; bins of (lane, level). */
    function exactOf(li) {
      var key = 'e' + li;
      if (decoded[key]) return decoded[key];
      var raw = lanes[li].exact, n = raw.length / 4;
      var s = new Float64Array(n), d = new Float64Array(n), dep = new Uint16Array(n), reg = new Uint32Array(n);
      var t = 0, maxDur = 0;
      for (var k = 0; k < n; k++) {
        t += raw[4 * k]; s[k] = t; d[k] = raw[4 * k + 1]; dep[k] = raw[4 * k + 2]; reg[k] = raw[4 * k + 3];
        if (d[k] > maxDur) maxDur = d[k];
      }
      return (decoded[key] = { n: n, start: s, dur: d, depth: dep, region: reg, maxDur: maxDur });
    }
    function binsOf(li, k) {
      var key = 'b' + li + '_' + k;
      if (decoded[key]) return decoded[key];
      var raw = lanes[li].bins[k] || [], n = raw.length / 5;
      var b = new Float64Array(n), dep = new Uint16Array(n), reg = new Uint32Array(n),
        cov = new Uint16Array(n), calls = new Uint32Array(n);
      var acc = 0;
      for (var q = 0; q < n; q++) {
        acc += raw[5 * q]; b[q] = acc; dep[q] = raw[5 * q + 1]; reg[q] = raw[5 * q + 2];
        cov[q] = raw[5 * q + 3]; calls[q] = raw[5 * q + 4];
      }
      return (decoded[key] = { n: n, bin: b, depth: dep, region: reg, cov: cov, calls: calls });
    }
    function lowerBound(arr, n, v) {
      var lo = 0, hi = n;
      while (lo < hi) { var m = (lo + hi) >> 1; if (arr[m] < v) lo = m + 1; else hi = m; }
      return lo;
    }
    function levelFor(nsPerPx) {
      for (var k = 0; k < levels.length; k++) if (levels[k] <= nsPerPx) return k;
      return levels.length - 1;
    }

    var W = 0;
    function draw() {
      var cv = canvasFor(view, height);
      var g = cv.g;
      W = cv.width;
      g.clearRect(0, 0, W, height);
      var z = (t1 - t0) / W, k = levelFor(z), w = levels[k], minExact = 2 * w;
      var drawn = 0;
      g.font = '10px monospace';
      g.textBaseline = 'middle';
      for (var li = 0; li < lanes.length; li++) {
        var l = lanes[li], top = l.y + LABEL;
        if (LABEL) {
          g.fillStyle = '#444';
          g.fillText('rank ' + l.rank + (l.label ? ' \u2013 ' + l.label : ''), 4, l.y + 7);
        } else if (li === 0 || lanes[li - 1].rank !== l.rank) {
          g.fillStyle = '#ccd';
          g.fillRect(0, l.y, W, 1);
        }
        var B = binsOf(li, k);
        var from = lowerBound(B.bin, B.n, Math.floor(t0 / w) - 1);
        for (var q = from; q < B.n && B.bin[q] * w <= t1; q++) {
          var x = (B.bin[q] * w - t0) / z;
          g.globalAlpha = 0.25 + 0.75 * B.cov[q] / 1000;
          g.fillStyle = colours[B.region[q]];
          g.fillRect(x, top + B.depth[q] * ROW, Math.max(1, w / z), ROW - (ROW > 4 ? 1 : 0));
          drawn++;
        }
        g.globalAlpha = 1;
        var E = exactOf(li);
        var e = lowerBound(E.start, E.n, t0 - E.maxDur);
        for (; e < E.n && E.start[e] <= t1; e++) {
          if (E.dur[e] < minExact || E.start[e] + E.dur[e] < t0) continue;
          var ex = (E.start[e] - t0) / z, ew = Math.max(1, E.dur[e] / z);
          if (ex < 0) { ew += ex; ex = 0; }
          if (ex + ew > W) ew = W - ex;
          var ey = top + E.depth[e] * ROW;
          g.fillStyle = colours[E.region[e]];
          g.fillRect(ex, ey, ew, ROW - (ROW > 4 ? 1 : 0));
          if (ROW >= 10 && ew > 30) {
            var label = fitText(g, names[E.region[e]], ew - 4);
            if (label) { g.fillStyle = '#000'; g.fillText(label, ex + 2, ey + ROW / 2); }
          }
          drawn++;
        }
      }
      // time axis
      g.fillStyle = '#555';
      g.font = '10px sans-serif';
      for (var a = 0; a <= 8; a++) {
        var ax = a * (W - 60) / 8;
        g.fillRect(ax, height - 16, 1, 4);
        g.fillText(at(t0 + ax * z), ax + 2, height - 7);
      }
      state.timeline.window = [t0, t1];
      state.timeline.level = k;
      state.timeline.drawn = drawn;
      status.textContent = 'showing ' + at(t0) + ' \u2013 ' + at(t1) + ' (' + fmt(t1 - t0) + ' of ' + fmt(span) + ')' +
        ' (level ' + k + ' of ' + (levels.length - 1) + ', ' + drawn + ' shapes)';
    }
    function zoom(factor, centre) {
      var c = centre === undefined ? (t0 + t1) / 2 : centre;
      var len = Math.max((t1 - t0) * factor, 1000);
      if (len > span) len = span;
      t0 = c - (c - t0) * len / (t1 - t0);
      t1 = t0 + len;
      if (t0 < 0) { t1 -= t0; t0 = 0; }
      if (t1 > span) { t0 -= t1 - span; t1 = span; }
      if (t0 < 0) t0 = 0;
      draw();
    }
    zin.addEventListener('click', function () { zoom(0.25); });
    zout.addEventListener('click', function () { zoom(4); });
    reset.addEventListener('click', function () { t0 = 0; t1 = span; draw(); });
    view.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var r = view.getBoundingClientRect();
      zoom(ev.deltaY < 0 ? 0.8 : 1.25, t0 + (ev.clientX - r.left) * (t1 - t0) / W);
    }, { passive: false });
    var drag = null;
    view.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, t0: t0, t1: t1 }; });
    window.addEventListener('mouseup', function () { drag = null; });
    view.addEventListener('mousemove', function (ev) {
      if (drag) {
        var dt = (ev.clientX - drag.x) * (drag.t1 - drag.t0) / W;
        t0 = drag.t0 - dt; t1 = drag.t1 - dt;
        if (t0 < 0) { t1 -= t0; t0 = 0; }
        if (t1 > span) { t0 -= t1 - span; t1 = span; }
        draw();
        return;
      }
      hover(ev);
    });
    view.addEventListener('mouseleave', hideTip);
    function hover(ev) {
      var r = view.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
      var z = (t1 - t0) / W, t = t0 + px * z, k = levelFor(z), w = levels[k];
      for (var li = 0; li < lanes.length; li++) {
        var l = lanes[li], top = l.y + LABEL;
        if (py < top || py >= top + l.depth * ROW) continue;
        var d = Math.floor((py - top) / ROW);
        var E = exactOf(li), e = lowerBound(E.start, E.n, t - E.maxDur), best = -1;
        for (; e < E.n && E.start[e] <= t + z; e++)
          if (E.depth[e] === d && E.dur[e] >= 2 * w && E.start[e] + E.dur[e] >= t - z) best = e;
        var head = 'rank ' + l.rank + (l.label ? ', ' + l.label : '') + '\n';
        if (best >= 0) {
          showTip(ev, head + names[E.region[best]] + '\nstart ' + at(E.start[best]) +
            ' from the run start, duration ' + fmt(E.dur[best]));
          return;
        }
        var B = binsOf(li, k), b = Math.floor(t / w);
        for (var q = lowerBound(B.bin, B.n, b); q < B.n && B.bin[q] === b; q++)
          if (B.depth[q] === d) {
            showTip(ev, head + '(' + B.calls[q] + ' call' + (B.calls[q] === 1 ? '' : 's') +
              ' starting here, mostly ' + names[B.region[q]] + ')\n' + at(b * w) + ' \u2013 ' +
              at((b + 1) * w) + ', ' + (B.cov[q] / 10).toFixed(1) + ' % covered');
            return;
          }
      }
      hideTip();
    }
    window.addEventListener('resize', draw);
    state.timeline.zoom = zoom;
    // A point (page pixels) over something drawn on the first lane: for tests.
    state.timeline.probe = function () {
      var r = view.getBoundingClientRect(), z = (t1 - t0) / W, k = levelFor(z), w = levels[k];
      var E = exactOf(0), B = binsOf(0, k), t = -1;
      for (var e = 0; e < E.n && t < 0; e++)
        if (E.depth[e] === 0 && E.dur[e] >= 2 * w && E.start[e] + E.dur[e] > t0 && E.start[e] < t1)
          t = Math.max(E.start[e], t0) + Math.min(E.dur[e], t1 - Math.max(E.start[e], t0)) / 2;
      for (var q = 0; q < B.n && t < 0; q++)
        if (B.depth[q] === 0 && B.bin[q] * w >= t0 && B.bin[q] * w < t1) t = (B.bin[q] + 0.5) * w;
      if (t < 0) return null;
      return { x: r.left + (t - t0) / z, y: r.top + lanes[0].y + LABEL + ROW / 2 };
    };
    state.timeline.show = function (a, b) { t0 = a; t1 = b; draw(); };
    draw();
  }

  /* ---- load-balance heatmap --------------------------------------------------------- */

  function setupHeatmap() {
    var box = document.getElementById('heatmap');
    var H = run.heat;
    if (!box || !H || H.ranks.length < 2) return;
    var R = H.ranks.length, M = names.length;
    var regions = run.cross.slice(0, 24).map(function (c) { return c.region; });
    var MAXROWS = 64, per = Math.ceil(R / MAXROWS), bins = Math.ceil(R / per);
    var CW = Math.max(28, Math.min(70, Math.floor((box.clientWidth - 140) / Math.max(1, regions.length))));
    var CH = bins > 32 ? 9 : 16, LEFT = 110, TOP = 90;
    var cv = canvasFor(box, TOP + bins * CH + 24);
    var g = cv.g;
    var cells = [];
    g.font = '11px sans-serif';
    regions.forEach(function (reg, c) {
      // colour range: from the least to the most of the bins' maxima
      var max = 0, min = Infinity;
      for (var b0 = 0; b0 < bins; b0++) {
        var m = -1;
        for (var r = b0 * per; r < Math.min(R, (b0 + 1) * per); r++) m = Math.max(m, H.values[r * M + reg]);
        if (m > max) max = m;
        if (m >= 0 && m < min) min = m;
      }
      g.save();
      g.translate(LEFT + c * CW + CW / 2, TOP - 6);
      g.rotate(-Math.PI / 4);
      g.fillStyle = '#333';
      g.fillText(fitText(g, names[reg], 110), 0, 0);
      g.restore();
      for (var b = 0; b < bins; b++) {
        var bmax = -1, bmin = Infinity, arg = -1, sum = 0, n = 0;
        for (var r2 = b * per; r2 < Math.min(R, (b + 1) * per); r2++) {
          var x = H.values[r2 * M + reg];
          if (x < 0) continue;
          if (x > bmax) { bmax = x; arg = r2; }
          if (x < bmin) bmin = x;
          sum += x; n++;
        }
        // colour by the bin's maximum so a slow rank is never averaged away
        var f = max > min && bmax >= 0 ? (bmax - min) / (max - min) : 0;
        g.fillStyle = bmax < 0 ? '#eee' : 'hsl(' + (55 - 55 * f) + ',85%,' + (88 - 45 * f) + '%)';
        g.fillRect(LEFT + c * CW, TOP + b * CH, CW - 1, CH - 1);
        if (bmax === max && max > 0) {
          g.strokeStyle = '#000';
          g.strokeRect(LEFT + c * CW + 0.5, TOP + b * CH + 0.5, CW - 2, CH - 2);
        }
        cells.push([c, b, reg, bmin, bmax, n ? sum / n : -1, arg]);
      }
    });
    g.fillStyle = '#333';
    for (var b = 0; b < bins; b++) {
      if (CH < 12 && b % 4) continue;
      var lo = H.ranks[b * per], hi = H.ranks[Math.min(R, (b + 1) * per) - 1];
      g.fillText(per > 1 ? 'ranks ' + lo + '\u2013' + hi : 'rank ' + lo, 4, TOP + b * CH + CH - 3);
    }
    var note = el('p', { class: 'legend', id: 'heatmap-note' },
      per > 1 ? R + ' ranks in ' + bins + ' bins of ' + per + ': each cell is coloured by the slowest rank of its bin; outlined: the slowest rank of the region.'
        : 'Inclusive time per rank, yellow (least) to red (most) per region; outlined: the slowest rank.');
    box.appendChild(note);
    state.heatmap = { bins: bins, perBin: per, regions: regions.length };
    cv.canvas.addEventListener('mousemove', function (ev) {
      var r = cv.canvas.getBoundingClientRect();
      var c = Math.floor((ev.clientX - r.left - LEFT) / CW), b = Math.floor((ev.clientY - r.top - TOP) / CH);
      var cell = cells.filter(function (q) { return q[0] === c && q[1] === b; })[0];
      if (!cell) { hideTip(); return; }
      var lo = H.ranks[b * per], hi = H.ranks[Math.min(R, (b + 1) * per) - 1];
      showTip(ev, names[cell[2]] + '\n' + (per > 1 ? 'ranks ' + lo + '\u2013' + hi + ': min ' + fmt(cell[3]) +
        ', mean ' + fmt(cell[5]) + ', max ' + fmt(cell[4]) + ' (rank ' + H.ranks[cell[6]] + ')'
        : 'rank ' + lo + ': ' + fmt(cell[4])));
    });
    cv.canvas.addEventListener('mouseleave', hideTip);
  }

  /* ---- MPI: share of wall time per rank ------------------------------------------ */

  function setupMpi() {
    var box = document.getElementById('mpi-ranks');
    if (!box || !run.mpi) return;
    var s = run.mpi.rankShare, lo = 0, hi = 0;
    for (var r = 1; r < s.length; r++) { if (s[r] < s[lo]) lo = r; if (s[r] > s[hi]) hi = r; }
    box.appendChild(el('p', { class: 'note', id: 'mpi-rank-share' },
      'Share of wall time in MPI per rank: lowest ' + (100 * s[lo]).toFixed(1) + ' % (rank ' +
      run.heat.ranks[lo] + '), highest ' + (100 * s[hi]).toFixed(1) + ' % (rank ' + run.heat.ranks[hi] + ').'));
  }

  [setupTree, setupFlame, setupTimeline, setupHeatmap, setupMpi].forEach(function (f) { f(); });
  state.ready = true;
  document.documentElement.setAttribute('data-ready', '1');
})();
