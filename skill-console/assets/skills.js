// The Skills pages: the loaded set (every status), filterable and paged, and one skill's
// page (tiers, outline, files, eligibility, shadows, exclusion), all from `/v1`.
"use strict";

const Skills = (() => {
  // Rows drawn at once: the list is filtered in memory and only one page is in the DOM, so
  // 10,000 skills cost one page of rows.
  const PAGE_ROWS = 100;
  // Codes that exclude a skill whatever its layer (docs/operator.md, trust).
  const EXCLUSION_CODES = ["untrusted-findings", "lock-mismatch", "lock-unreadable"];

  const state = { text: "", layer: "", dialect: "", status: "", trust: "", findings: false, page: 0 };

  function isFinding(d) {
    return d.code.startsWith("scan-") || EXCLUSION_CODES.includes(d.code);
  }

  function byPath(diagnostics) {
    const m = new Map();
    for (const d of diagnostics) {
      if (!m.has(d.path)) m.set(d.path, []);
      m.get(d.path).push(d);
    }
    return m;
  }

  // The source's trust level, and whether the trust policy let the skill through.
  function trustCell(skill, diags) {
    const level = skill.trust ? `${skill.trust}: ` : "";
    const excl = diags.find((d) => EXCLUSION_CODES.includes(d.code));
    if (skill.status === "excluded" || excl) {
      return h("span", { class: "bad" }, level + "excluded" + (excl ? ` (${excl.code})` : ""));
    }
    return h("span", { class: "good" }, level + "passes");
  }

  function options(values, current, all) {
    return [h("option", { value: "" }, all)].concat(
      [...new Set(values)].sort().map((v) => h("option", { value: v, selected: v === current }, v)));
  }

  async function list(view) {
    const [listing, diagnostics] = await Promise.all([
      Api.get("/v1/skills?status=all"),
      Api.get("/v1/diagnostics"),
    ]);
    const diags = byPath(diagnostics.diagnostics);
    const rows = listing.skills.map((sk) => {
      const ds = diags.get(sk.path) || [];
      return { sk, ds, findings: ds.filter(isFinding) };
    });
    const body = h("div", {});
    const count = h("p", { role: "status" });

    function draw() {
      const t = state.text.toLowerCase();
      const shown = rows.filter(({ sk, findings }) =>
        (!t || sk.name.toLowerCase().includes(t) || sk.description.toLowerCase().includes(t)) &&
        (!state.layer || sk.layer === state.layer) &&
        (!state.dialect || sk.dialect === state.dialect) &&
        (!state.status || sk.status === state.status) &&
        (!state.trust || sk.trust === state.trust) &&
        (!state.findings || findings.length > 0));
      const pages = Math.max(1, Math.ceil(shown.length / PAGE_ROWS));
      state.page = Math.min(state.page, pages - 1);
      const start = state.page * PAGE_ROWS;
      const slice = shown.slice(start, start + PAGE_ROWS);
      count.textContent = shown.length === 0
        ? "No skill matches these filters."
        : `Showing ${start + 1}–${start + slice.length} of ${shown.length} (${rows.length} in all).`;
      const errors = (ds) => ds.filter((d) => d.severity === "error").length;
      const warnings = (ds) => ds.filter((d) => d.severity === "warning").length;
      const tableEl = table(
        ["Name", "Layer", "Dialect", "Status", "Trust", "Diagnostics", "Findings", "Description"],
        slice.map(({ sk, ds, findings }) => [
          h("a", { href: "#/skill/" + encodeURIComponent(sk.name) }, sk.name),
          sk.layer, sk.dialect, sk.status, trustCell(sk, ds),
          ds.length ? `${errors(ds)} errors, ${warnings(ds)} warnings` : "none",
          findings.length ? findings.map((d) => d.code).join(", ") : "none",
          sk.description,
        ]), { id: "skills-table" });
      const pager = h("div", { class: "pager" },
        h("button", { type: "button", disabled: state.page === 0, onclick: () => { state.page -= 1; draw(); } }, "Previous page"),
        h("span", {}, `Page ${state.page + 1} of ${pages}`),
        h("button", { type: "button", disabled: state.page >= pages - 1, onclick: () => { state.page += 1; draw(); } }, "Next page"));
      body.replaceChildren(tableEl, pager);
    }

    const skills = listing.skills;
    const form = h("form", { class: "filters", role: "search", onsubmit: (e) => e.preventDefault() },
      h("label", {}, "Name or description",
        h("input", { type: "search", value: state.text, oninput: (e) => { state.text = e.target.value; state.page = 0; draw(); } })),
      h("label", {}, "Layer", h("select", { onchange: (e) => { state.layer = e.target.value; state.page = 0; draw(); } },
        options(skills.map((x) => x.layer), state.layer, "any layer"))),
      h("label", {}, "Dialect", h("select", { onchange: (e) => { state.dialect = e.target.value; state.page = 0; draw(); } },
        options(skills.map((x) => x.dialect), state.dialect, "any dialect"))),
      h("label", {}, "Status", h("select", { onchange: (e) => { state.status = e.target.value; state.page = 0; draw(); } },
        options(skills.map((x) => x.status), state.status, "any status"))),
      h("label", {}, "Trust", h("select", { onchange: (e) => { state.trust = e.target.value; state.page = 0; draw(); } },
        options(skills.map((x) => x.trust || ""), state.trust, "any trust"))),
      h("label", {}, "Findings only",
        h("input", { type: "checkbox", checked: state.findings, onchange: (e) => { state.findings = e.target.checked; state.page = 0; draw(); } })));
    view.replaceChildren(
      h("h2", {}, "Skills"),
      h("p", { class: "muted" }, `Generation ${listing.generation}: ${diagnostics.errors} errors and ${diagnostics.warnings} warnings in all.`),
      form, count, body);
    draw();
  }

  async function settle(promise) {
    try { return { ok: await promise }; } catch (err) { return { err }; }
  }

  async function one(view, name) {
    const enc = encodeURIComponent(name);
    const [detail, tiers, outline, files, listing, diagnostics] = await Promise.all([
      settle(Api.get(`/v1/skills/${enc}`)),
      settle(Api.get("/v1/get_skill" + Api.query({ path: name }))),
      settle(Api.get(`/v1/skills/${enc}/outline`)),
      settle(Api.get(`/v1/skills/${enc}/resources`)),
      settle(Api.get("/v1/skills?status=all")),
      settle(Api.get("/v1/diagnostics")),
    ]);
    const summary = listing.ok && listing.ok.skills.find((x) => x.name === name);
    const parts = [h("p", {}, h("a", { href: "#/skills" }, "← All skills")), h("h2", {}, name)];
    const facts = (detail.ok || summary);
    if (facts) {
      parts.push(h("p", {}, facts.description));
      parts.push(h("dl", { class: "facts" },
        ["layer", "dialect", "status", "trust", "domain", "path", "schedule"].flatMap((k) =>
          [h("dt", {}, k), h("dd", {}, facts[k] === null || facts[k] === undefined ? "–" : String(facts[k]))]),
        h("dt", {}, "invocable by"),
        h("dd", {}, [facts.model_invocable ? "the model" : "", facts.user_invocable ? "the user" : ""].filter(Boolean).join(" and ") || "nobody")));
    }
    if (detail.err) {
      const why = detail.err.code === "skill_excluded" ? "Excluded: " : "Not served: ";
      parts.push(h("h3", {}, "Why it is not served"), h("p", { class: "bad", id: "exclusion" }, why + detail.err.message));
    }
    const own = facts && diagnostics.ok ? diagnostics.ok.diagnostics.filter((d) => d.path === facts.path) : [];
    parts.push(h("h3", {}, "Diagnostics and findings"), own.length
      ? table(["Code", "Severity", "Line", "Message"], own.map((d) => [d.code, d.severity, d.line === null ? "–" : String(d.line), d.message]))
      : h("p", {}, "None."));
    if (detail.ok) {
      parts.push(h("h3", {}, "Shadows"), detail.ok.shadows.length
        ? h("p", {}, "This entry wins over (lower layers, not served): ",
          detail.ok.shadows.map((x) => `${x.layer} ${x.path}`).join("; "))
        : h("p", {}, "It shadows no other entry."));
    }
    parts.push(h("h3", {}, "Eligibility per profile"), eligibility(name, detail.ok));
    parts.push(h("h3", {}, "Tiers (get_skill)"), tiers.ok
      ? h("pre", { tabindex: 0 }, tiers.ok.text)
      : h("p", { class: "muted" }, tiers.err.message));
    parts.push(h("h3", {}, "Outline"), outline.ok
      ? table(["Section", "Level", "Line", "Characters", "Tokens"], outline.ok.sections.map((x) =>
        [x.path.join(" › "), String(x.level), String(x.line), String(x.chars), String(x.tokens)]))
      : h("p", { class: "muted" }, outline.err.message));
    parts.push(h("h3", {}, "Files"), files.ok
      ? (files.ok.resources.length
        ? table(["Path", "Kind", "Bytes", "SHA-256"], files.ok.resources.map((x) =>
          [x.path, x.kind, String(x.size), x.sha256 ? h("code", { class: "digest" }, x.sha256) : "not hashed"]), { id: "files" })
        : h("p", {}, "Only its skill file."))
      : h("p", { class: "muted" }, files.err.message));
    view.replaceChildren(...parts);
  }

  // The skill's affinity under every profile the server knows (its detail's `profiles`,
  // from `/v1/profiles`), then a check under any profile the user names.
  function eligibility(name, detail) {
    const known = detail && detail.profiles && detail.profiles.length
      ? table(["Profile", "Affinity", "The model may use it"], detail.profiles.map((p) => [p.profile, p.affinity,
        h("span", { class: p.eligible ? "good" : "bad" }, p.eligible ? "yes" : "no")]), { id: "profiles" })
      : h("p", {}, "The server knows no profile (none configured, none named by a skill).");
    const out = h("p", { role: "status" });
    const input = h("input", { type: "text", placeholder: "(no profile)" });
    async function check(e) {
      if (e) e.preventDefault();
      const profile = input.value.trim();
      const label = profile ? `profile ${profile}` : "no profile";
      try {
        const seen = await Api.get("/v1/skills" + Api.query({ profile, invocable_by: "model" }));
        const ok = seen.skills.some((x) => x.name === name);
        out.replaceChildren(h("span", { class: ok ? "good" : "bad" },
          ok ? `The model may use it under ${label}.` : `The model may not use it under ${label}.`));
      } catch (err) {
        out.replaceChildren(errorBox(err));
      }
    }
    const form = h("form", { class: "ask", onsubmit: check },
      h("label", {}, "Profile", input), h("button", { type: "submit" }, "Check"));
    check();
    return h("div", {}, known, form, out);
  }

  return { list, one };
})();
