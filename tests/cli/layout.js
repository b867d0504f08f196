// layout.js - the report test's own measurements of a rendered page
// (tests/cli/report.sh injects it into a copy of each page and reads the
// result back from the dumped DOM, the pre element #vf-layout): one line per flaw,
// then "checked N elements, M labels, K charts".
//  wide:  an element wider than the viewport (or past its edges) that no
//         scroll box holds
//  page:  the page itself scrolls sideways
//  label: two visible text labels of a chart whose boxes intersect
//  line:  a series line, another label's reference line, an axis or a
//         label's leader line drawn through a chart's text label
//  hidden: a solid series line drawn under another one on every vertex
//  clip:  a chart's text label past the chart's own edge (cut off)
//  point: a chart drawing exactly one data point (a figure, not a plot)
//  mark:  a chart's text label over a series' marker (a point hidden by text)
//  crowd: half of a series' markers (12 or more) squeezed into a tenth of
//         the span they cover on an axis (a linear axis over decades)
//  legend: a legend entry whose series has no visible mark in its chart
//         (none drawn, or every sampled spot covered by another series)
//  scrolled: a scroll box scrolled to its end hides its row headers (a
//         table's th[scope=row], a chart's row labels: text.at anchored at
//         the end) - the first column must stay
//  case:  a heading rendered in other letters than written (a model id
//         capitalised by CSS)
(function () {
  var out = [], W = document.documentElement.clientWidth, nel = 0, nlab = 0, nch = 0;
  function scroller(e) {
    for (var p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      var o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') return p;
    }
    return null;
  }
  function visible(e) {
    if (e.closest && e.closest('.hid')) return false;
    var r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }
  function name(e) {
    var t = (e.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 40);
    return e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined && e.className ? '.' + e.className : '') + ' "' + t + '"';
  }
  document.querySelectorAll('body *').forEach(function (e) {
    if (e.id === 'vf-layout' || !visible(e)) return;
    nel++;
    var r = e.getBoundingClientRect();
    if (r.right <= W + 1 && r.left >= -1) return;
    var s = scroller(e);
    if (s) {
      var q = s.getBoundingClientRect();
      if (q.right <= W + 1 && q.left >= -1) return;
    }
    if (!s || !e.closest('svg') || !s.contains(e)) out.push('wide ' + Math.round(r.left) + '..' + Math.round(r.right) + ' > ' + W + ': ' + name(e));
  });
  if (document.documentElement.scrollWidth > W + 1) out.push('page ' + document.documentElement.scrollWidth + ' > ' + W);
  document.querySelectorAll('svg.chart').forEach(function (g) {
    if (!visible(g)) return;
    nch++;
    var ts = Array.prototype.filter.call(g.querySelectorAll('text'), function (t) {
      return visible(t) && t.textContent.trim() !== '';
    });
    var bs = ts.map(function (t) { return t.getBoundingClientRect(); });
    nlab += ts.length;
    var gb = g.getBoundingClientRect();
    bs.forEach(function (r, i) {
      if (r.left < gb.left - 1 || r.right > gb.right + 1 || r.top < gb.top - 1 || r.bottom > gb.bottom + 1)
        out.push('clip ' + g.getAttribute('data-chart') + ': ' + name(ts[i]) + ' past the chart\'s edge');
    });
    for (var i = 0; i < ts.length; i++)
      for (var j = i + 1; j < ts.length; j++) {
        var a = bs[i], b = bs[j];
        var ox = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        var oy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (ox > 1 && oy > 1)
          out.push('label ' + g.getAttribute('data-chart') + ': ' + name(ts[i]) + ' x ' + name(ts[j]));
      }
    // lines: a drawn series line through a label's box
    var segs = [];
    g.querySelectorAll('line.cap, line.ax').forEach(function (l) { // reference lines, axes and leader lines
      if (l.closest('.hid')) return;
      var m = l.getScreenCTM(), x1 = +l.getAttribute('x1'), x2 = +l.getAttribute('x2'), y1 = +l.getAttribute('y1'), y2 = +l.getAttribute('y2');
      segs.push([{x: m.a * x1 + m.c * y1 + m.e, y: m.b * x1 + m.d * y1 + m.f}, {x: m.a * x2 + m.c * y2 + m.e, y: m.b * x2 + m.d * y2 + m.f}, l]);
    });
    g.querySelectorAll('path.ln').forEach(function (p) {
      if (p.closest('.hid')) return;
      var m = p.getScreenCTM(), re = /[ML]\s*(-?[\d.]+)[ ,](-?[\d.]+)/g, k, prev = null;
      while ((k = re.exec(p.getAttribute('d') || ''))) {
        var x = +k[1], y = +k[2], q = {x: m.a * x + m.c * y + m.e, y: m.b * x + m.d * y + m.f};
        if (prev) segs.push([prev, q, p]);
        prev = q;
      }
    });
    function hits(a, b, r) { // Liang-Barsky: does segment ab cross rectangle r (shrunk by 1 px)?
      var t0 = 0, t1 = 1, dx = b.x - a.x, dy = b.y - a.y;
      var P = [-dx, dx, -dy, dy], Q = [a.x - (r.left + 1), (r.right - 1) - a.x, a.y - (r.top + 1), (r.bottom - 1) - a.y];
      for (var i = 0; i < 4; i++) {
        if (P[i] === 0) { if (Q[i] < 0) return false; continue; }
        var t = Q[i] / P[i];
        if (P[i] < 0) { if (t > t1) return false; if (t > t0) t0 = t; } else { if (t < t0) return false; if (t < t1) t1 = t; }
      }
      return true;
    }
    ts.forEach(function (t, i) {
      for (var j = 0; j < segs.length; j++)
        if (segs[j][2].parentNode !== t.parentNode && hits(segs[j][0], segs[j][1], bs[i])) {
          var gs = segs[j][2].closest('[data-s]');
          out.push('line ' + g.getAttribute('data-chart') + ': ' + name(t) + ' crossed by the line of ' + (gs ? gs.getAttribute('data-s') : '?'));
          break;
        }
    });
    // hidden: a solid series line whose every vertex lies on a line drawn after it
    var lines = [];
    g.querySelectorAll('path.ln').forEach(function (p) {
      if (p.closest('.hid')) return;
      var re = /[ML]\s*(-?[\d.]+)[ ,](-?[\d.]+)/g, k, v = [];
      while ((k = re.exec(p.getAttribute('d') || ''))) v.push(Math.round(+k[1]) + ',' + Math.round(+k[2]));
      var gs = p.closest('[data-s]');
      lines.push({s: gs ? gs.getAttribute('data-s') : '', v: v, da: p.classList.contains('da')});
    });
    lines.forEach(function (a, i) {
      for (var j = i + 1; j < lines.length; j++) {
        var b = lines[j];
        if (a.da || b.s === a.s || !a.v.length) continue;
        if (a.v.every(function (x) { return b.v.indexOf(x) >= 0; })) {
          out.push('hidden ' + g.getAttribute('data-chart') + ': the line of ' + a.s + ' lies under ' + b.s);
          break;
        }
      }
    });
    // mark: a label's box over a series marker's centre
    var marks = Array.prototype.filter.call(g.querySelectorAll('[data-s] circle, circle[data-s], [data-s] .mk, .mk[data-s]'),
      function (c) { return visible(c); });
    ts.forEach(function (t, i) {
      var r = bs[i];
      for (var j = 0; j < marks.length; j++) {
        var q = marks[j].getBoundingClientRect(), cx = (q.left + q.right) / 2, cy = (q.top + q.bottom) / 2;
        if (cx > r.left + 1 && cx < r.right - 1 && cy > r.top + 1 && cy < r.bottom - 1) {
          var ms = marks[j].closest('[data-s]');
          out.push('mark ' + g.getAttribute('data-chart') + ': ' + name(t) + ' over a marker of ' + (ms ? ms.getAttribute('data-s') : '?'));
          break;
        }
      }
    });
    // crowd: half of a series' markers (12 or more) squeezed into a tenth of
    // the span the series covers on an axis (a linear axis over decades)
    var byS = {};
    marks.forEach(function (c) {
      var ms = c.closest('[data-s]'), k = ms ? ms.getAttribute('data-s') : '', q = c.getBoundingClientRect();
      (byS[k] = byS[k] || []).push([(q.left + q.right) / 2, (q.top + q.bottom) / 2]);
    });
    Object.keys(byS).forEach(function (k) {
      var a = byS[k];
      if (a.length < 12) return;
      [0, 1].forEach(function (d) {
        var v = a.map(function (p) { return p[d]; }).sort(function (x, y) { return x - y; });
        var span = v[v.length - 1] - v[0], half = Math.ceil(v.length / 2), win = Infinity;
        for (var i = 0; i + half - 1 < v.length; i++) win = Math.min(win, v[i + half - 1] - v[i]);
        if (span > 20 && win < span / 10)
          out.push('crowd ' + g.getAttribute('data-chart') + ': ' + half + ' of ' + v.length + ' markers of ' + k +
                   ' within ' + Math.round(win) + ' of ' + Math.round(span) + ' px along ' + (d ? 'y' : 'x'));
      });
    });
    // data points: the distinct positions of the series' markers and line vertices
    var at = {}, pts = 0, bars = g.querySelectorAll('rect[data-s], [data-s] rect').length;
    function pt(x, y) { var k = Math.round(x) + ',' + Math.round(y); if (!at[k]) { at[k] = 1; pts++; } }
    g.querySelectorAll('[data-s] circle, circle[data-s]').forEach(function (c) {
      pt(+c.getAttribute('cx'), +c.getAttribute('cy'));
    });
    g.querySelectorAll('path.ln').forEach(function (p) {
      var re = /[ML]\s*(-?[\d.]+)[ ,](-?[\d.]+)/g, m;
      while ((m = re.exec(p.getAttribute('d') || ''))) pt(+m[1], +m[2]);
    });
    if (!bars && pts === 1) out.push('point ' + g.getAttribute('data-chart') + ': a chart of one point');
  });
  // legend: every entry's series visible in its chart, sampled with the
  // browser's own hit test (what lies on top at each spot of the series)
  function spots(e) {
    var m = e.getScreenCTM(), v = [], tag = e.tagName.toLowerCase(), k;
    function at(x, y) { v.push([x, y]); }
    if (tag === 'path') {
      var re = /[ML]\s*(-?[\d.]+)[ ,](-?[\d.]+)/g, prev = null;
      while ((k = re.exec(e.getAttribute('d') || ''))) {
        var p = [+k[1], +k[2]];
        if (prev) for (var f = 0.125; f < 1; f += 0.125) at(prev[0] + f * (p[0] - prev[0]), prev[1] + f * (p[1] - prev[1]));
        at(p[0], p[1]);
        prev = p;
      }
    } else if (tag === 'line') {
      var x1 = +e.getAttribute('x1'), x2 = +e.getAttribute('x2'), y1 = +e.getAttribute('y1'), y2 = +e.getAttribute('y2');
      for (var f2 = 0.02; f2 < 1; f2 += 0.04) at(x1 + f2 * (x2 - x1), y1 + f2 * (y2 - y1));
    } else if (tag === 'circle') {
      var cx = +e.getAttribute('cx'), cy = +e.getAttribute('cy'), r = 0.8 * +e.getAttribute('r');
      at(cx, cy); at(cx + r, cy); at(cx - r, cy); at(cx, cy + r); at(cx, cy - r);
    } else if (tag === 'rect') {
      var x = +e.getAttribute('x'), y = +e.getAttribute('y'), w = +e.getAttribute('width'), h = +e.getAttribute('height');
      at(x + w / 2, y + h / 2); at(x + w / 4, y + h / 4); at(x + 3 * w / 4, y + 3 * h / 4);
    } else if (tag === 'polygon') {
      var b = e.getBBox();
      at(b.x + b.width / 2, b.y + b.height / 2);
    }
    return v.map(function (q) { return {x: m.a * q[0] + m.c * q[1] + m.e, y: m.b * q[0] + m.d * q[1] + m.f}; });
  }
  function seen(g, s, e) {
    var box = scroller(g), H = innerHeight, ok = false;
    // the spots in user units once, then each brought into view before the hit test
    var m0 = e.getScreenCTM(), inv = m0.inverse(), pts = spots(e).map(function (q) {
      return {x: inv.a * q.x + inv.c * q.y + inv.e, y: inv.b * q.x + inv.d * q.y + inv.f};
    });
    for (var i = 0; i < pts.length && !ok; i++) {
      var m = e.getScreenCTM(), p = {x: m.a * pts[i].x + m.c * pts[i].y + m.e, y: m.b * pts[i].x + m.d * pts[i].y + m.f};
      if (p.y < 0 || p.y >= H) { window.scrollBy(0, p.y - H / 2); m = e.getScreenCTM(); p = {x: m.a * pts[i].x + m.c * pts[i].y + m.e, y: m.b * pts[i].x + m.d * pts[i].y + m.f}; }
      if (box) {
        var q = box.getBoundingClientRect();
        if (p.x < Math.max(q.left, 0) || p.x >= Math.min(q.right, W)) {
          box.scrollLeft += p.x - (Math.max(q.left, 0) + Math.min(q.right, W)) / 2;
          m = e.getScreenCTM(); p = {x: m.a * pts[i].x + m.c * pts[i].y + m.e, y: m.b * pts[i].x + m.d * pts[i].y + m.f};
        }
      }
      if (p.x < 0 || p.x >= W || p.y < 0 || p.y >= H) continue;
      var hit = document.elementFromPoint(p.x, p.y);
      if (!hit || hit.tagName.toLowerCase() === 'text' || !g.contains(hit)) continue;
      var hs = hit.closest('[data-s]');
      ok = !!hs && hs.getAttribute('data-s') === s;
    }
    if (box) box.scrollLeft = 0;
    return ok;
  }
  document.querySelectorAll('.legend[data-for]').forEach(function (l) {
    var id = l.getAttribute('data-for'), g = document.querySelector('svg.chart[data-chart="' + id + '"]');
    l.querySelectorAll('button[data-s]').forEach(function (b) {
      var s = b.getAttribute('data-s'), ok = false;
      if (g) g.querySelectorAll('[data-s]').forEach(function (e) {
        if (ok || e.getAttribute('data-s') !== s) return;
        var els = e.tagName.toLowerCase() === 'g' ? e.querySelectorAll('path, line, circle, rect, polygon') : [e];
        Array.prototype.forEach.call(els, function (x) {
          var r = x.getBoundingClientRect(), t = x.tagName.toLowerCase();
          if (!ok && !x.closest('.hid') && (r.width > 0 && r.height > 0 || (t === 'line' || t === 'path') && r.width + r.height > 0)) ok = seen(g, s, x);
        });
      });
      if (!ok) out.push('legend ' + id + ': "' + s + '" has no visible mark in its chart');
    });
  });
  window.scrollTo(0, 0);
  // scrolled: each box that scrolls sideways, at its far end, still shows
  // its first column
  document.querySelectorAll('body *').forEach(function (b) {
    var o = getComputedStyle(b).overflowX;
    if ((o !== 'auto' && o !== 'scroll') || b.scrollWidth <= b.clientWidth + 1 || !visible(b)) return;
    b.scrollLeft = b.scrollWidth;
    var q = b.getBoundingClientRect();
    b.querySelectorAll('th[scope=row], svg.chart text.at[text-anchor=end]').forEach(function (h) {
      var r = h.getBoundingClientRect();
      if (r.width > 0 && (r.left < q.left - 1 || r.right > q.right + 1))
        out.push('scrolled: ' + name(h) + ' out of its box when the box is scrolled to its end');
    });
    b.scrollLeft = 0;
  });
  // case: headings shown as written
  document.querySelectorAll('h1, h2').forEach(function (h) {
    var shown = h.innerText.replace(/\s+/g, ' ').trim(), written = h.textContent.replace(/\s+/g, ' ').trim();
    if (visible(h) && shown !== written) out.push('case ' + h.tagName.toLowerCase() + ': shown "' + shown.slice(0, 60) + '", written "' + written.slice(0, 60) + '"');
  });
  var pre = document.createElement('pre');
  pre.id = 'vf-layout';
  pre.textContent = out.join('\n') + (out.length ? '\n' : '') + 'checked ' + nel + ' elements, ' + nlab + ' labels, ' + nch + ' charts, width ' + W + (matchMedia('(prefers-color-scheme: dark)').matches ? ', dark' : ', light') + '\n';
  document.body.appendChild(pre);
})();
