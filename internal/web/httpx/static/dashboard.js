// The dashboard's little script: copy buttons (a payment link's address in
// its share sheet). Without it the address is still there to select.
"use strict";
document.addEventListener("click", function (ev) {
  var button = ev.target.closest("button.copy");
  if (!button) return;
  var text = button.getAttribute("data-copy");
  var done = function () {
    button.textContent = button.getAttribute("data-done");
    button.setAttribute("data-copied", "1");
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { fallback(button, text, done); });
  } else {
    fallback(button, text, done);
  }
});

// fallback copies from the share sheet's field where the clipboard API is
// not offered (a page served over plain http).
function fallback(button, text, done) {
  var field = button.parentNode.querySelector("input.share-url");
  if (!field) return;
  field.select();
  try {
    if (document.execCommand("copy")) done();
  } catch (e) { /* the text stays selected for the user to copy */ }
}
