// The selection playground: a request (and a profile) through `/v1/search` (the ranked,
// explained candidates with each signal), `/v1/select` (the gate and the selected set) and
// `/v1/catalog` (what a model would be shown); a pasted model output through `/v1/route`.
"use strict";

const Playground = (() => {
  // Candidates shown for a request.
  const CANDIDATES = 10;

  function gateLine(search, selection) {
    const top = search.matches[0];
    if (!top) return h("p", { class: "verdict bad", id: "gate" }, "Gate closed: no skill has any evidence for this request.");
    const margin = top.confidence - search.threshold;
    const sign = margin >= 0 ? "+" : "−";
    const opens = !selection.no_skill_needed;
    return h("p", { class: "verdict " + (opens ? "good" : "bad"), id: "gate" },
      `Gate ${opens ? "open" : "closed"}: first candidate ${top.name} at confidence ${fmt(top.confidence, 2)}, ` +
      `threshold ${fmt(search.threshold, 2)}, margin ${sign}${fmt(Math.abs(margin), 2)}` +
      (opens ? "." : " (no skill needed)."));
  }

  function candidates(search) {
    const maxText = Math.max(0.01, ...search.matches.map((m) => m.text_score));
    const rows = search.matches.map((m, i) => [
      String(i + 1),
      h("span", { class: "candidate" }, m.name),
      h("span", {}, bar(m.confidence, 1, `confidence ${fmt(m.confidence, 2)}`), " ", fmt(m.confidence, 2)),
      h("span", {}, bar(m.text_score, maxText, `lexical ${fmt(m.text_score, 2)}`), " ", fmt(m.text_score, 2)),
      h("span", {}, bar(Math.max(0, m.semantic), 1, `semantic ${fmt(m.semantic, 3)}`, "bar2"), " ", fmt(m.semantic, 3)),
      m.triggers.length ? m.triggers.map((t) => `${t.kind} ${t.trigger}`).join("; ") : "none",
      m.explicit ? "named" : (m.phrase ? `phrase “${m.phrase}”` : "none"),
      m.reason,
    ]);
    return table(["Rank", "Skill", "Confidence", "Lexical (BM25F)", "Semantic (cosine)", "Triggers", "Name or phrase", "Reason"],
      rows, { id: "candidates", class: "bars" });
  }

  function selected(selection) {
    if (selection.selected_skills.length === 0) return h("p", {}, "Nothing selected.");
    return h("ol", { id: "selected" }, selection.selected_skills.map((x) =>
      h("li", {}, h("strong", {}, x.skill_id), ` (confidence ${fmt(x.confidence, 2)}): ${x.reason}`,
        x.alternatives && x.alternatives.length ? ` — alternatives: ${x.alternatives.join(", ")}` : "")));
  }

  async function run(out, message, profile) {
    out.replaceChildren(h("p", {}, "Asking the engine…"));
    try {
      const [search, selection, catalog] = await Promise.all([
        Api.get("/v1/search" + Api.query({ q: message, limit: CANDIDATES, profile })),
        Api.post("/v1/select", profile ? { message, profile } : { message }),
        Api.get("/v1/catalog" + Api.query({ profile })),
      ]);
      const d = selection.disclosure;
      out.replaceChildren(...[
        gateLine(search, selection),
        h("h3", {}, "Ranked candidates and their signals"),
        search.matches.length ? candidates(search) : h("p", {}, "No candidate."),
        h("h3", {}, "Selected set"), selected(selection),
        h("h3", {}, `Disclosure: tier ${d.tier}, ${d.estimated_tokens} of ${d.budget_tokens} tokens`),
        d.omitted.length ? h("p", {}, "Left out for the budget: " + d.omitted.join(", ")) : null,
        h("pre", { tabindex: 0 }, d.text),
        h("h3", {}, "The catalog a model would get"),
        h("pre", { tabindex: 0, id: "catalog" }, catalog.text),
      ].filter(Boolean));
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  }

  async function route(out, output, profile) {
    try {
      const routed = await Api.post("/v1/route", profile ? { output, profile } : { output });
      out.replaceChildren(h("pre", { tabindex: 0, id: "routed" }, JSON.stringify(routed, null, 2)));
    } catch (err) {
      out.replaceChildren(errorBox(err));
      if (err.status === 401) out.append(h("p", {}, "Routing is an action: type the server's token above."));
    }
  }

  function page(view) {
    const params = hashParams();
    const message = h("textarea", { id: "request", rows: 3 }, params.get("q") || "");
    const profile = h("input", { id: "profile", type: "text", placeholder: "(no profile)", value: params.get("profile") || "" });
    const out = h("div", { id: "result" });
    const form = h("form", { class: "ask", onsubmit: (e) => {
      e.preventDefault();
      const q = message.value.trim();
      if (q) run(out, q, profile.value.trim());
    } },
      h("label", {}, "Request", message),
      h("label", {}, "Profile", profile),
      h("button", { type: "submit" }, "Select"));
    const pasted = h("textarea", { id: "model-output", rows: 4, placeholder: "```cmd\ncode-review 42\n```" });
    const routeOut = h("div", {});
    const routeForm = h("form", { class: "ask", onsubmit: (e) => { e.preventDefault(); route(routeOut, pasted.value, profile.value.trim()); } },
      h("label", {}, "Model output", pasted), h("button", { type: "submit" }, "Route"));
    view.replaceChildren(h("h2", {}, "Selection playground"), form, out,
      h("h3", {}, "Route a model output"), routeForm, routeOut);
    if (params.get("q")) run(out, params.get("q"), profile.value.trim());
  }

  return { page };
})();
