// layout.js - the report test's own measurements of a rendered page
// (tests/cli/report.sh injects it into a copy of each page and reads the
// result back from the dumped DOM, the pre element #vf-layout): one line per flaw,
// then "checked N elements, M labels, K charts".
//  wide:  an element wider than the viewport (or past its edges) that no
//         scroll box holds
//  page:  the page itself scrolls sideways
//  label: two visible text labels of a chart whose boxes intersect
//  line:  a series line drawn through a chart's text label
//  hidden: a solid series line drawn under another one on every vertex
//  clip:  a chart's text label past the chart's own edge (cut off)
//  point: a chart drawing exactly one data point (a figure, not a plot)
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
        if (hits(segs[j][0], segs[j][1], bs[i])) {
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
  var pre = document.createElement('pre');
  pre.id = 'vf-layout';
  pre.textContent = out.join('\n') + (out.length ? '\n' : '') + 'checked ' + nel + ' elements, ' + nlab + ' labels, ' + nch + ' charts, width ' + W + (matchMedia('(prefers-color-scheme: dark)').matches ? ', dark' : ', light') + '\n';
  document.body.appendChild(pre);
})();
