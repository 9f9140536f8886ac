// The colour theme (Bootstrap's data-bs-theme on <html>): the person's own choice where they
// made one (kept in localStorage), otherwise the system's (prefers-color-scheme), followed
// live. Loaded in <head> without defer, so the first paint is already in the right theme (no
// flash of white). A static file: the CSP allows no inline script.
//
// The switch is one button (aria-pressed = dark). A choice equal to the system's theme is
// forgotten rather than stored, so pressing it back is how a person returns to "follow my
// system": a two-state control that still has the third state.
(() => {
  const KEY = "echo-memory-theme";
  const system = window.matchMedia("(prefers-color-scheme: dark)");
  const systemTheme = () => (system.matches ? "dark" : "light");
  let choice = null;
  try {
    choice = localStorage.getItem(KEY);
  } catch {
    // Storage is off (a privacy setting): the system's theme, and a choice lasts one page.
  }
  if (choice !== "dark" && choice !== "light") choice = null;

  const apply = () => {
    const theme = choice || systemTheme();
    document.documentElement.setAttribute("data-bs-theme", theme);
    const button = document.getElementById("theme-switch");
    if (button) button.setAttribute("aria-pressed", String(theme === "dark"));
  };

  apply();
  system.addEventListener("change", apply);
  document.addEventListener("DOMContentLoaded", () => {
    const button = document.getElementById("theme-switch");
    if (!button) return;
    button.hidden = false; // without script it could do nothing, so it is shown only now
    apply();
    button.addEventListener("click", () => {
      const next = (choice || systemTheme()) === "dark" ? "light" : "dark";
      choice = next === systemTheme() ? null : next;
      try {
        if (choice) localStorage.setItem(KEY, choice);
        else localStorage.removeItem(KEY);
      } catch {
        // Storage is off: the choice holds until the next page.
      }
      apply();
    });
  });
})();
