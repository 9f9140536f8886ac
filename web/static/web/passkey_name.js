// Names the passkey the browser just registered (django-otp-webauthn's script announces it
// with the otp_webauthn.register_complete event): the name typed beside the button goes
// to the server with the new passkey's id. A static file: the page runs no inline script.
document.addEventListener("otp_webauthn.register_complete", (event) => {
  const form = document.getElementById("passkey-name-form");
  form.elements.passkey.value = event.detail.id;
  if (form.elements.name.value.trim()) {
    form.submit();
  } else {
    window.location.assign(form.dataset.done);
  }
});
