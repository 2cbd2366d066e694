// Settles a test session through POST /checkout/sandbox, then shows the
// page again so the server renders the result. Without JavaScript the form
// posts to the page itself and the same happens.
document.addEventListener("DOMContentLoaded", function () {
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
