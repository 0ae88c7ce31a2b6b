// The Catalog budget, Schedules and Live pages.
"use strict";

const Views = (() => {
  // Events kept on the Live page, newest first.
  const LIVE_EVENTS = 200;
  // The schedules timeline's width in pixels and the rows' height.
  const TIMELINE_WIDTH = 760;
  const TIMELINE_ROW = 22;
  const TIMELINE_LABELS = 190;
  // Least distance between two date labels, in pixels.
  const TIMELINE_LABEL_GAP = 48;

  // Each included entry's characters in the rendered catalog: its own lines of the text.
  function shares(text, included) {
    const sizes = new Map(included.map((n) => [n, 0]));
    for (const line of text.split("\n")) {
      const m = /^\s*- ([^:\s]+)/.exec(line);
      if (m && sizes.has(m[1])) sizes.set(m[1], sizes.get(m[1]) + line.length + 1);
    }
    return sizes;
  }

  async function budget(view) {
    const params = hashParams();
    const profile = h("input", { id: "budget-profile", type: "text", placeholder: "(no profile)", value: params.get("profile") || "" });
    const chars = h("input", { id: "budget-chars", type: "number", min: 1, placeholder: "(the server's)", value: params.get("budget_chars") || "" });
    const out = h("div", {});
    async function draw(e) {
      if (e) e.preventDefault();
      try {
        const q = { profile: profile.value.trim(), budget_chars: chars.value.trim() };
        const md = await Api.get("/v1/catalog" + Api.query({ ...q, format: "markdown" }));
        const r = md.report;
        const sizes = shares(md.text, r.included);
        // Bars to the largest entry; the text gives each one's share of the budget.
        const largest = Math.max(1, ...sizes.values());
        const rows = r.included.map((n) => {
          const c = sizes.get(n) || 0;
          return [n, h("span", {}, bar(c, largest, `${c} characters`), " ",
            `${c} (${fmt((100 * c) / r.budget_chars, 1)}%)`), r.truncated.includes(n) ? "description cut" : "whole"];
        });
        out.replaceChildren(
          h("p", { class: "verdict", id: "budget-summary" },
            `${r.used_chars} of ${r.budget_chars} characters used; ${r.included.length} of ${r.candidates} skills listed, ` +
            `${r.truncated.length} cut short, ${r.omitted.length} left out.`),
          h("h3", {}, "Share of the budget"),
          table(["Skill", "Characters (share of the budget)", "Entry"], rows, { class: "bars", id: "shares" }),
          h("h3", {}, "Left out"),
          r.omitted.length ? h("ul", { id: "omitted" }, r.omitted.map((n) => h("li", {}, n))) : h("p", {}, "Nothing."),
          h("h3", {}, "The catalog"),
          h("pre", { tabindex: 0 }, md.text));
      } catch (err) {
        out.replaceChildren(errorBox(err));
      }
    }
    view.replaceChildren(h("h2", {}, "Catalog budget"),
      h("form", { class: "ask", onsubmit: draw },
        h("label", {}, "Profile", profile), h("label", {}, "Budget (characters)", chars),
        h("button", { type: "submit" }, "Show")), out);
    await draw();
  }

  function timeline(sched) {
    const from = Date.parse(sched.from);
    const last = Math.max(from + 3600e3, ...sched.schedules.flatMap((x) => x.next.map(Date.parse)));
    const span = last - from;
    const width = TIMELINE_WIDTH - TIMELINE_LABELS - 10;
    const x = (t) => TIMELINE_LABELS + ((t - from) / span) * width;
    const height = TIMELINE_ROW * (sched.schedules.length + 1) + 10;
    const day = 86400e3;
    const ticks = [];
    // One labelled day line every `step` days, so labels never overlap.
    const step = Math.max(1, Math.ceil(TIMELINE_LABEL_GAP / ((width * day) / span)));
    for (let t = Math.ceil(from / day) * day; t <= last; t += step * day) {
      ticks.push(s("line", { class: "axis", x1: x(t), x2: x(t), y1: 4, y2: height - 14, "stroke-dasharray": "2 3" }),
        s("text", { x: x(t) + 2, y: height - 2 }, new Date(t).toISOString().slice(5, 10)));
    }
    const rows = sched.schedules.map((e, i) => {
      const y = TIMELINE_ROW * i + 14;
      return s("g", {},
        s("text", { x: 0, y: y + 4 }, e.skill),
        s("line", { class: "axis", x1: TIMELINE_LABELS, x2: TIMELINE_LABELS + width, y1: y, y2: y }),
        e.next.map((t) => s("line", { class: "tick", x1: x(Date.parse(t)), x2: x(Date.parse(t)), y1: y - 7, y2: y + 7 },
          s("title", {}, `${e.skill} fires at ${t}`))));
    });
    return s("svg", { width: TIMELINE_WIDTH, height, role: "img", id: "timeline",
      "aria-label": "Next fires of every schedule on a timeline (also in the table below)" }, ticks, rows);
  }

  function lateness(run) {
    const late = (Date.parse(run.started) - Date.parse(run.scheduled)) / 1000;
    return Number.isFinite(late) ? `${fmt(late, 1)} s` : "–";
  }

  async function schedules(view) {
    const sched = await Api.get("/v1/schedules");
    const parts = [h("h2", {}, "Schedules"), h("p", { class: "muted" }, `Times in ${sched.timezone}, from ${sched.from}.`)];
    if (sched.schedules.length === 0) {
      parts.push(h("p", {}, "No loaded skill has a schedule."));
    } else {
      parts.push(timeline(sched), table(["Skill", "Schedule", "Next fire", "Then", "Last run"],
        sched.schedules.map((e) => [e.skill, `${e.expression} (${e.timezone})`,
          h("span", { class: "next-fire" }, e.next[0] || "never"), e.next.slice(1).join(", "),
          e.last_run ? `${e.last_run.outcome} at ${e.last_run.started}, ${lateness(e.last_run)} late` + (e.running ? "; running now" : "")
            : (e.running ? "running now" : "not yet")]), { id: "schedules" }));
    }
    const history = sched.history || [];
    // The replica column only when several replicas share the schedules.
    const replicas = history.some((r) => r.replica);
    parts.push(h("h3", {}, "Last runs"), history.length
      ? table(["Run", "Skill", "Scheduled", "Started", "Lateness", "Outcome", "Error"].concat(replicas ? ["Replica"] : []),
        history.map((r) => [String(r.id), r.skill, r.scheduled, r.started, lateness(r),
          h("span", { class: r.outcome === "succeeded" ? "good" : (r.outcome === "failed" ? "bad" : "") }, r.outcome), r.error || ""]
          .concat(replicas ? [r.replica || "this replica"] : [])), { id: "runs" })
      : h("p", {}, "No run yet."));
    const deliveries = sched.deliveries || [];
    // With a database the deliveries are every replica's, each attempt naming its replica.
    const shared = deliveries.some((d) => d.attempts.some((a) => a.replica));
    parts.push(h("h3", {}, "Webhook deliveries"), ...(deliveries.length
      ? [h("p", { class: "muted", id: "deliveries-scope" }, shared
          ? "Every replica's deliveries, from the shared database; each attempt names the replica that made it."
          : "This server's deliveries."),
        table(["Delivery", "Delivered", "Retries", "Attempts"],
          deliveries.map((d) => [d.key,
            h("span", { class: d.delivered ? "good" : "bad" }, d.delivered ? "yes" : "no"),
            String(d.retries),
            d.attempts.map((a) => `#${a.attempt}${a.replica ? " by " + a.replica : ""}: `
              + (a.status === null ? (a.error || "no answer") : "HTTP " + a.status)).join("; ")]),
          { id: "deliveries" })]
      : [h("p", {}, "None yet (a webhook delivers runs that need a model).")]));
    if (sched.diagnostics.length) {
      parts.push(h("h3", {}, "Schedules that do not parse"),
        table(["Path", "Column", "Message"], sched.diagnostics.map((d) => [d.path, String(d.column ?? "–"), d.message])));
    }
    view.replaceChildren(...parts);
  }

  let stream = null;

  function live(view) {
    if (stream) stream.close();
    const state = h("p", { role: "status", id: "live-state" }, "Connecting to /v1/events…");
    const list = h("ol", { class: "events", id: "events", "aria-live": "polite" });
    view.replaceChildren(h("h2", {}, "Live"),
      h("p", { class: "muted" }, "Reloads (the change sets) and finished scheduled runs, newest first, as the server sends them."),
      state, list);
    stream = new EventSource("/v1/events");
    stream.onopen = () => { state.textContent = "Connected: waiting for events."; };
    stream.onerror = () => { state.textContent = "Disconnected; the browser retries on its own."; };
    const add = (kind) => (ev) => {
      let text = ev.data;
      try { text = JSON.stringify(JSON.parse(ev.data)); } catch (_) { /* shown as sent */ }
      list.prepend(h("li", {}, h("strong", {}, kind), ` ${new Date().toISOString()} `, h("code", {}, text)));
      while (list.children.length > LIVE_EVENTS) list.lastChild.remove();
    };
    for (const kind of ["change", "scheduled", "lagged"]) stream.addEventListener(kind, add(kind));
  }

  function leave() {
    if (stream) { stream.close(); stream = null; }
  }

  return { budget, schedules, live, leave };
})();
