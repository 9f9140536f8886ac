// Names the passkey the browser just registered (django-otp-webauthn's script announces it
// with the otp_webauthn.register_complete event): the name typed beside the button (or
// none: it keeps "Passkey N") goes to the server with the new passkey's id, whose answer
// shows the first recovery codes where the person has none. A static file: the page runs
// no inline script.
document.addEventListener("otp_webauthn.register_complete", (event) => {
  const form = document.getElementById("passkey-name-form");
  form.elements.passkey.value = event.detail.id;
  form.submit();
});
