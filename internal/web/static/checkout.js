// Settles a test session through POST /checkout/sandbox, then shows the
// page again so the server renders the result. Without JavaScript the form
// posts to the page itself and the same happens.
document.addEventListener("DOMContentLoaded", function () {
  live();
  var form = document.getElementById("sandbox");
  if (!form) return;
  var buttons = form.querySelectorAll("button[name=issue]");
  buttons.forEach(function (button) {
    button.addEventListener("click", function (e) {
      e.preventDefault();
      buttons.forEach(function (b) { b.disabled = true; });
      var result = document.getElementById("result");
      result.textContent = form.dataset.processing;
      fetch("/checkout/sandbox", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ transactionId: form.dataset.session, issue: button.value })
      }).then(function (res) {
        return res.json().then(function (body) {
          if (res.ok) { window.location.replace(window.location.href); return; }
          result.textContent = body.message || res.statusText;
          buttons.forEach(function (b) { b.disabled = false; });
        });
      }).catch(function () {
        result.textContent = form.dataset.network;
        buttons.forEach(function (b) { b.disabled = false; });
      });
    });
  });
});

// A live payment: POST /checkout/initiate with the chosen method and phone,
// then ask POST /checkout/verify every 3 seconds until the outcome, and
// show the page again. A payment made on the aggregator's page (a card,
// CinetPay) goes there first; back on this page, it is followed the same
// way as a payment already waiting.
function live() {
  var form = document.getElementById("pay");
  var waiting = document.getElementById("waiting");
  var result = document.getElementById("result");
  function post(path, body) {
    return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
      .then(function (res) { return res.json().then(function (b) { return { ok: res.ok, body: b }; }); });
  }
  function follow(id) {
    setTimeout(function () {
      post("/checkout/verify", { transactionId: id }).then(function (r) {
        if (r.ok && r.body.status === "PENDING") { follow(id); return; }
        window.location.replace(window.location.href);
      }).catch(function () { follow(id); });
    }, 3000);
  }
  if (waiting) { follow(waiting.dataset.session); return; }
  if (!form) return;
  // A card is paid on the aggregator's page: no phone number to ask.
  function phoneFor() {
    var card = !!form.querySelector("input[name=method]:checked[data-card]");
    document.getElementById("phone").closest("label").hidden = card;
  }
  form.querySelectorAll("input[name=method]").forEach(function (m) { m.addEventListener("change", phoneFor); });
  phoneFor();
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var button = document.getElementById("pay-button");
    var method = form.querySelector("input[name=method]:checked").value.split("|");
    button.disabled = true;
    result.textContent = form.dataset.processing;
    post("/checkout/initiate", { transactionId: form.dataset.session, gatewayId: method[0], code: method[1],
      phone: document.getElementById("phone").value }).then(function (r) {
      if (!r.ok) { result.textContent = r.body.message; button.disabled = false; return; }
      if (r.body.redirectUrl) { window.location.assign(r.body.redirectUrl); return; } // the aggregator's page
      result.textContent = form.dataset.waiting;
      result.dataset.state = "waiting";
      var cancel = document.getElementById("cancel"); // a payment waits: only its outcome ends it
      if (cancel) cancel.remove();
      follow(form.dataset.session);
    }).catch(function () { result.textContent = form.dataset.network; button.disabled = false; });
  });
}
