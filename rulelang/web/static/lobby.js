// Start forms (the lobby's, the editor's): show exactly the seats of the chosen player count; in the
// editor, the player counts follow the rule file the text is based on.
(function () {
  "use strict";
  function seats(form) {
    var players = form.querySelector("select.players");
    var n = players ? parseInt(players.value, 10) : 0;
    form.querySelectorAll("label.seat").forEach(function (label) {
      label.hidden = !(parseInt(label.dataset.seat, 10) < n);
    });
  }
  function counts(form, list) {
    var players = form.querySelector("select.players");
    if (!players) { return; }
    players.textContent = "";
    list.forEach(function (n) {
      var o = document.createElement("option");
      o.value = n;
      o.textContent = n;
      players.appendChild(o);
    });
    seats(form);
  }
  document.querySelectorAll("form.newtable").forEach(function (form) {
    var players = form.querySelector("select.players");
    if (players) { players.addEventListener("change", function () { seats(form); }); }
    seats(form);
  });
  var base = document.getElementById("base");
  var play = document.getElementById("playform");
  if (base && play) {
    base.addEventListener("change", function () {
      var chosen = base.options[base.selectedIndex];
      counts(play, (chosen.dataset.counts || "").split(",").filter(Boolean));
    });
  }
})();
