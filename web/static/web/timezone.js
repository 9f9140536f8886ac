// Tells the server the browser's time zone (an IANA name such as Europe/Paris) in the `tz`
// cookie, so pages show times in it from the next page on (web/time_zones.py checks the
// name against its own list). A choice in the person's settings wins over it. Without
// script the pages use UTC and say so.
(() => {
  let zone;
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    return;
  }
  if (!zone || !/^[A-Za-z0-9_+\-/]{1,64}$/.test(zone)) return;
  const current = document.cookie.split("; ").find((c) => c.startsWith("tz="));
  if (current === `tz=${zone}`) return;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  document.cookie = `tz=${zone}; Path=/; Max-Age=31536000; SameSite=Lax${secure}`;
})();
