// The cache report's only script: on a click (or Enter) on a request row, show its first divergence.
(function () {
  "use strict";
  var rows = JSON.parse(document.getElementById("report-data").textContent);
  var unit = document.body.dataset.unit;
  var panel = document.getElementById("detail");
  var fmt = function (n) { return n.toLocaleString("en-US"); };

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  function visible(text, changed) {  // as `promptcache diff` prints it: escapes, and middots for changed spaces
    text = text.replace(/\n/g, "\\n").replace(/\t/g, "\\t").replace(/\r/g, "\\r");
    return changed ? text.replace(/ /g, "\u00b7") : text;
  }
  function diffLine(label, runs, keep, mark) {
    var line = el("div");
    line.appendChild(el("span", {"class": "label"}, label));
    runs.forEach(function (run) {
      var op = run[0], text = run[1];
      if (op === "equal") line.appendChild(document.createTextNode(visible(text, false)));
      else if (op === keep) line.appendChild(el(mark, {}, visible(text, true)));
    });
    return line;
  }
  function amount(v) { return unit === "USD" ? "$" + v.toFixed(4) : fmt(Math.round(v)) + " " + unit; }

  function show(r) {
    panel.textContent = "";
    panel.appendChild(el("h3", {}, "Request " + r.index + " \u00b7 " + r.session + " \u00b7 t=" + r.t.toFixed(1) + " s"));
    var dl = el("dl");
    function add(term, value) { if (value === null || value === undefined || value === "") return;
      dl.appendChild(el("dt", {}, term)); var dd = el("dd"); if (typeof value === "string") dd.textContent = value;
      else dd.appendChild(value); dl.appendChild(dd); }
    if (r.error) add("refused", r.error);
    add("prompt", fmt(r.prompt) + " tokens");
    add("cached", fmt(r.cached) + (r.prompt ? " (" + Math.round(100 * r.cached / r.prompt) + "%)" : ""));
    if (document.body.dataset.source !== "verify") add("written", fmt(r.written));
    add("uncached", fmt(r.uncached));
    add("oracle", fmt(r.oracle) + " (best possible)");
    if (r.cost !== null) add("cost", amount(r.cost));
    if (r.ttft_s !== null) add("TTFT", Math.round(r.ttft_s * 1000) + " ms");
    var d = r.divergence;
    if (r.cause) add("miss cause", el("code", {}, r.cause + (r.expected ? " (expected)" : " (unexpected)")));
    else if (!r.error) add("miss cause", "none: a prefix hit" + (d ? " (" + d.cause + ")" : ""));
    panel.appendChild(dl);
    if (!d) return;
    var where = el("dl", {"class": "divergence"});
    dl = where;
    panel.appendChild(el("h3", {}, "First divergence"));
    add("layer", d.layer ? el("code", {}, d.layer) : null);
    add("block path", d.path ? el("code", {}, d.path + (d.earlier_path && d.earlier_path !== d.path
      ? "  (earlier: " + d.earlier_path + ")" : "")) : null);
    add("token", "offset " + fmt(d.token_offset) + " of " + fmt(d.prompt_tokens) +
      (d.earlier_index !== null ? ", " + fmt(d.common_prefix_tokens) + " shared with request " + d.earlier_index
        : ", the first request"));
    if (d.static_after) add("after it", fmt(d.static_after) + " identical tokens follow the divergence");
    add("what changed", d.detail);
    panel.appendChild(where);
    if (d.hint) panel.appendChild(el("div", {"class": "hint"}, "Fix: " + d.hint));
    if (d.diff.length) {
      var box = el("div", {"class": "diff", "id": "diff"});
      box.appendChild(diffLine("- earlier  ", d.diff, "delete", "del"));
      box.appendChild(diffLine("+ new      ", d.diff, "insert", "ins"));
      panel.appendChild(box);
    }
  }

  function select(node) {
    document.querySelectorAll(".request.selected").forEach(function (n) { n.classList.remove("selected"); });
    node.classList.add("selected");
    show(rows[Number(node.dataset.index)]);
  }
  document.querySelectorAll(".request").forEach(function (node) {
    node.addEventListener("click", function () { select(node); });
    node.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") select(node); });
  });
  var first = document.querySelector(".request.unexpected");
  if (first) select(first);
})();
