// The console's router: `#/page` in the address picks the page; the token form.
"use strict";

(() => {
  const view = document.getElementById("view");

  const pages = {
    skills: () => Skills.list(view),
    skill: (rest) => Skills.one(view, decodeURIComponent(rest)),
    playground: () => Playground.page(view),
    budget: () => Views.budget(view),
    schedules: () => Views.schedules(view),
    live: () => Views.live(view),
  };

  async function show() {
    const route = location.hash.replace(/^#\/?/, "").split("?")[0] || "skills";
    const slash = route.indexOf("/");
    const name = slash >= 0 ? route.slice(0, slash) : route;
    const rest = slash >= 0 ? route.slice(slash + 1) : "";
    const page = pages[name] || pages.skills;
    const nav = name === "skill" ? "skills" : name;
    for (const a of document.querySelectorAll("nav a")) {
      if (a.dataset.page === nav) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    if (name !== "live") Views.leave();
    view.replaceChildren(h("p", {}, "Loading…"));
    try {
      await page(rest);
    } catch (err) {
      view.replaceChildren(errorBox(err));
    }
    document.title = `${view.querySelector("h2") ? view.querySelector("h2").textContent : "Console"} · Skills console`;
  }

  const tokenInput = document.getElementById("token");
  const tokenState = document.getElementById("token-state");
  function tokenSaid() {
    tokenState.textContent = Api.token() ? "A token is set for this tab." : "No token: reading only.";
  }
  document.getElementById("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    Api.setToken(tokenInput.value.trim());
    tokenInput.value = "";
    tokenSaid();
  });
  tokenSaid();
  window.addEventListener("hashchange", show);
  show();
})();
