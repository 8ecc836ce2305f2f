// A seat's page: live updates through server-sent events, decisions sent as JSON with the decision number.
(function () {
  "use strict";
  var main = document.getElementById("seat");
  var token = main.dataset.token;
  var body = document.getElementById("body");
  var problem = document.getElementById("problem");
  var busy = false;

  function shown() {
    var s = document.getElementById("status");
    return s ? s.dataset.version + "/" + s.dataset.decision : "";
  }
  function say(text) {
    problem.textContent = text || "";
    problem.hidden = !text;
  }
  function refresh() {
    return fetch("/s/" + token + "/fragment", {cache: "no-store"}).then(function (r) {
      if (!r.ok) { throw new Error("the page could not be updated (" + r.status + ")"); }
      return r.text();
    }).then(function (html) {
      body.innerHTML = html;
      var s = document.getElementById("status");
      document.title = document.title.replace(/ \(your decision\)$/, "") +
        (s && s.dataset.yourTurn === "yes" ? " (your decision)" : "");
    }).catch(function (e) { say(e.message); });
  }
  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.classList.contains("act")) { return; }
    ev.preventDefault();
    if (busy) { return; }
    busy = true;
    var data = {action: form.elements.action.value, decision: parseInt(form.elements.decision.value, 10)};
    fetch("/api/s/" + token + "/act", {method: "POST", headers: {"content-type": "application/json"},
                                        body: JSON.stringify(data)})
      .then(function (r) { return r.json().then(function (j) { return [r.ok, j]; }); })
      .then(function (res) {
        say(res[0] ? "" : res[1].error);
        return refresh();
      })
      .catch(function (e) { say("the decision could not be sent: " + e.message); })
      .then(function () { busy = false; });
  });
  document.addEventListener("input", function (ev) {
    if (ev.target.id !== "choicefilter") { return; }
    var words = ev.target.value.toLowerCase();
    document.querySelectorAll("#actions .choices form.act").forEach(function (form) {
      form.hidden = words !== "" && form.textContent.toLowerCase().indexOf(words) < 0;
    });
  });
  if (window.EventSource) {
    var events = new EventSource("/s/" + token + "/events");
    events.addEventListener("update", function (ev) {
      var d = JSON.parse(ev.data);
      var s = document.getElementById("status");
      if (!s || String(d.decision) !== s.dataset.decision || d.status !== s.dataset.status) { refresh(); }
    });
  }
})();
