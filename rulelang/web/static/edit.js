// The rules editor: check the text on request (and a moment after typing stops), mark diagnostics by line.
(function () {
  "use strict";
  var text = document.getElementById("text");
  var gutter = document.getElementById("gutter");
  var list = document.getElementById("diagnostics");
  var status = document.getElementById("checkstatus");
  var base = document.getElementById("base");
  var playfile = document.getElementById("playfile");
  var marks = {};
  var timer = null;
  var asked = 0;

  function drawGutter() {
    var n = text.value.split("\n").length;
    var out = [];
    for (var i = 1; i <= n; i++) { out.push(marks[i] ? marks[i] + " " + i : "" + i); }
    gutter.textContent = out.join("\n");
  }
  function offsetOf(line, column) {
    var lines = text.value.split("\n");
    var at = 0;
    for (var i = 0; i < line - 1 && i < lines.length; i++) { at += lines[i].length + 1; }
    return at + Math.max(0, column - 1);
  }
  function show(diags) {
    marks = {};
    list.textContent = "";
    diags.forEach(function (d) {
      var li = document.createElement("li");
      li.className = d.severity;
      li.dataset.line = d.line;
      li.dataset.column = d.column;
      li.dataset.code = d.code;
      li.textContent = d.line + ":" + d.column + " " + d.severity + "[" + d.code + "]: " + d.message +
        (d.hint ? " (" + d.hint + ")" : "");
      li.title = d.text;
      li.addEventListener("click", function () {
        var at = offsetOf(d.line, d.column);
        text.focus();
        text.setSelectionRange(at, at + 1);
      });
      list.appendChild(li);
      if (!marks[d.line] || d.severity === "error") { marks[d.line] = d.severity === "error" ? "\u2716" : "\u26a0"; }
    });
    drawGutter();
    var errors = diags.filter(function (d) { return d.severity === "error"; }).length;
    status.textContent = errors ? errors + " error(s)" : (diags.length ? "no errors, " + diags.length + " warning(s)" : "no problems");
    status.className = errors ? "bad" : "good";
  }
  function check() {
    var mine = ++asked;
    status.textContent = "checking...";
    status.className = "";
    fetch("/api/check", {method: "POST", headers: {"content-type": "application/json"},
                         body: JSON.stringify({text: text.value, file: base.value})})
      .then(function (r) { return r.json().then(function (j) { return [r.ok, j]; }); })
      .then(function (res) {
        if (mine !== asked) { return; }
        if (!res[0]) { status.textContent = res[1].error; status.className = "bad"; return; }
        show(res[1].diagnostics);
      })
      .catch(function (e) { status.textContent = "the check failed: " + e.message; status.className = "bad"; });
  }
  document.getElementById("check").addEventListener("click", check);
  text.addEventListener("input", function () {
    drawGutter();
    clearTimeout(timer);
    timer = setTimeout(check, 800);
  });
  text.addEventListener("scroll", function () { gutter.scrollTop = text.scrollTop; });
  base.addEventListener("change", function () { playfile.value = base.value; });
  drawGutter();
})();
