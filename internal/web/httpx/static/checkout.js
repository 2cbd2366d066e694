// Settles a test session through POST /checkout/sandbox, then shows the
// page again so the server renders the result. Without JavaScript the form
// posts to the page itself and the same happens.
document.addEventListener("DOMContentLoaded", function () {
  live();
  // Cancelling is asked twice, by the page itself (the server shows the
  // question, with or without JavaScript): a stray tap must not end the
  // payment.
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
          if (res.ok) { again(); return; }
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
  // The step the payment waits for can change while it waits (an
  // aggregator's page given later, a code accepted): the page is shown
  // again for it, as for the outcome.
  function follow(id, step) {
    setTimeout(function () {
      post("/checkout/verify", { transactionId: id }).then(function (r) {
        var next = r.body.nextAction;
        if (r.ok && r.body.status === "PENDING" && (!next || next.type === step)) { follow(id, step); return; }
        if (next && next.type === "redirect") { window.location.assign(next.url); return; }
        again();
      }).catch(function () { follow(id, step); });
    }, 3000);
  }
  if (waiting) {
    var step = waiting.dataset.code ? "enter_code" : document.getElementById("continue") ? "redirect" : "approve";
    follow(waiting.dataset.session, step);
    countdown();
    codeForm(post);
    return;
  }
  form = form || document.getElementById("link-pay");
  if (!form) return;
  // A card is paid on the aggregator's page: no phone number to ask. A
  // method that asks for a code first shows the field and how to get it.
  function fieldsFor() {
    var chosen = form.querySelector("input[name=method]:checked");
    var billing = !!(chosen && chosen.dataset.billing);
    document.getElementById("phone").closest("label").hidden = form.id === "pay" && !!(chosen && chosen.dataset.card) && !billing;
    var block = document.getElementById("billing");
    if (block) {
      block.hidden = !billing;
      block.querySelectorAll("input").forEach(function (i) { i.required = billing; });
    }
    var label = document.getElementById("phone-label");
    if (!label.dataset.mobile) label.dataset.mobile = label.textContent;
    label.textContent = billing ? label.dataset.card : label.dataset.mobile;
    document.getElementById("phone-hint").hidden = billing;
    var code = document.getElementById("authcode-field");
    if (!code) return;
    var help = chosen && chosen.dataset.preauth;
    code.hidden = !help;
    document.getElementById("authcode").required = !!help;
    document.getElementById("authcode-help").hidden = !help;
    if (help) document.getElementById("authcode-help").textContent = help;
  }
  form.querySelectorAll("input[name=method]").forEach(function (m) { m.addEventListener("change", fieldsFor); });
  // Opening another country's tab chooses its first operator, so that the
  // method paid with is always one the customer sees.
  form.querySelectorAll("input[name=country]").forEach(function (c) {
    c.addEventListener("change", function () {
      var group = c.closest(".country");
      if (group.querySelector("input[name=method]:checked")) return;
      var first = group.querySelector("input[name=method]");
      if (first) { first.checked = true; fieldsFor(); }
    });
  });
  fieldsFor();
  if (form.id !== "pay") return; // the link page posts its form: the session's page follows
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var button = document.getElementById("pay-button");
    var method = form.querySelector("input[name=method]:checked").value.split("|");
    button.disabled = true;
    result.textContent = form.dataset.processing;
    var body = { transactionId: form.dataset.session, gatewayId: method[0], code: method[1], phone: document.getElementById("phone").value };
    var authcode = document.getElementById("authcode-field");
    if (authcode && !authcode.hidden) body.authCode = document.getElementById("authcode").value;
    var holder = holderOf();
    if (holder) body.holder = holder;
    post("/checkout/initiate", body).then(function (r) {
      // Refused by the aggregator: the page, shown again, says why in the
      // customer's words.
      if (!r.ok && r.body.again) { again(); return; }
      if (!r.ok) { result.textContent = r.body.message; button.disabled = false; return; }
      var next = r.body.nextAction || { type: "approve" };
      if (next.type === "redirect") { window.location.assign(next.url); return; } // the aggregator's page
      again(); // the page shows the step: who it waits for, or what to do
    }).catch(function () { result.textContent = form.dataset.network; button.disabled = false; });
  });
}

// countdown counts the first minute of a payment's wait down on its help
// line ("a request should appear within n s"), then shows what to do when
// none came: send the request again, or pay with another operator.
// Without the script, the help and those buttons show at once.
function countdown() {
  var help = document.getElementById("no-prompt");
  if (!help || !help.dataset.waited) return;
  var recover = document.getElementById("recover");
  // Counted from the page's load and the wait the service measured, not
  // from a date: the phone's clock may be off.
  var loaded = Date.now(), waited = Number(help.dataset.waited), text = help.textContent, wait = 60;
  function tick() {
    var left = Math.ceil(wait - waited - (Date.now() - loaded) / 1000);
    if (left > 0) {
      help.textContent = help.dataset.countdown.replace("{n}", left);
      if (recover) recover.hidden = true;
      setTimeout(tick, 1000);
      return;
    }
    help.textContent = text;
    if (recover) recover.hidden = false;
  }
  tick();
}

// holderOf is the card holder the form asks for a card that needs one.
function holderOf() {
  var billing = document.getElementById("billing");
  if (!billing || billing.hidden) return null;
  function v(id) { var i = document.getElementById(id); return i ? i.value : ""; }
  return { name: v("holder_name"), email: v("holder_email"), address: v("address"), city: v("city"), state: v("state"), zipCode: v("zip") };
}

// The code the aggregator sent the customer: POST /checkout/code, then the
// page again for what follows (a refused code leaves the form, with the
// aggregator's words).
function codeForm(post) {
  var form = document.getElementById("code-form");
  if (!form) return;
  var result = document.getElementById("result");
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var button = document.getElementById("code-button");
    button.disabled = true;
    result.textContent = form.dataset.processing;
    post("/checkout/code", { transactionId: form.dataset.session, code: document.getElementById("otp").value }).then(function (r) {
      if (!r.ok) { result.textContent = r.body.message; button.disabled = false; return; }
      if (r.body.nextAction && r.body.nextAction.type === "enter_code") {
        result.textContent = r.body.nextAction.instructions || r.body.message;
        button.disabled = false;
        return;
      }
      again();
    }).catch(function () { result.textContent = form.dataset.network; button.disabled = false; });
  });
}

// again shows the page again, as the server renders it now. The address
// may end in "#pay" (the way to another operator): without it, a reload
// and not a jump within the page.
function again() {
  window.location.replace(window.location.href.split("#")[0]);
}
