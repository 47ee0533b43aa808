// The approvals dashboard (docs/gateway.md `GET /`). Plain JavaScript, no build step.
//
// Rules this file keeps:
// - every piece of server data is inserted with textContent / text nodes, never
//   innerHTML (commands and causes are attacker-influenced text);
// - outcomes are shown truthfully (docs/approvals.md#outcomes-and-what-the-agent-sees): "cancelled" and "timeout" mean
//   nobody answered and are labelled "not answered", never "denied";
// - live updates come from the SSE stream /v1/events (read with fetch so the
//   token stays in a header); if it errors the page polls /v1/approvals every
//   2 s and retries the stream every few seconds;
// - the token lives in this page's memory (state.token) only; it goes to
//   sessionStorage only when "remember on this device" is ticked
//   (docs/security.md#the-dashboard-and-http-headers). No inline script or style: the CSP forbids it.
"use strict";

(function () {
  const TOKEN_KEY = "multiplex.token";
  const POLL_MS = 2000;
  const PROFILES_EVERY_MS = 10000;
  const PROFILES_PAGE = 50;
  const SSE_RETRY_MS = 5000;
  const TOAST_MS = 6000;
  const TOAST_COMMAND = 60;

  const OUTCOME_LABELS = {
    approved: "approved",
    denied: "denied",
    blocked: "blocked",
    cancelled: "not answered",
    timeout: "not answered",
  };
  const CHOICE_LABELS = {
    once: "Approved once",
    session: "Approved for the session",
    always: "Always allowed",
    deny: "Denied",
  };

  const state = {
    token: null,
    whoami: null,
    approvals: new Map(), // approval_id -> approval object
    answeredHere: new Set(), // ids this tab answered: no second toast from the stream
    stream: null, // AbortController of the open event stream
    pollTimer: null,
    sseRetryTimer: null,
    profilesTimer: null,
    profilesSoon: null,
    profilesOffset: 0,
    profilesQuery: "",
    profilesSearchTimer: null,
    decisionsTimer: null,
    decisionsLate: null,
    tickTimer: null,
  };

  const $ = (id) => document.getElementById(id);

  // --- small DOM builder: strings become text nodes, so nothing is parsed as HTML
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "testid") node.dataset.testid = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // A toast names the command, never repeats a long one whole (it would cover the page).
  function short(command) {
    const text = String(command || "");
    return text.length > TOAST_COMMAND ? text.slice(0, TOAST_COMMAND - 1) + "…" : text;
  }

  // On a small screen a table row is a card (dashboard.css): each cell carries its column's name.
  function labelCells(tbody) {
    const table = tbody.closest("table");
    const names = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
    for (const row of tbody.rows) {
      if (row.cells.length !== names.length) continue; // a full-width row (a profile's error)
      [...row.cells].forEach((cell, index) => cell.setAttribute("data-label", names[index]));
    }
  }

  function toast(message, kind) {
    const node = el("div", { class: "toast " + (kind || "info"), testid: "toast" }, message);
    $("toasts").append(node);
    setTimeout(() => node.remove(), TOAST_MS);
  }

  // --- API ---------------------------------------------------------------
  class HttpError extends Error {
    constructor(status, detail) {
      super(detail || "HTTP " + status);
      this.status = status;
    }
  }

  async function api(path, options) {
    const response = await request(path, options);
    return response.json();
  }

  // The response itself (headers too: X-Total-Count for pages).
  async function request(path, options) {
    const opts = options || {};
    const headers = { Authorization: "Bearer " + state.token };
    if (opts.body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method: opts.method || "GET",
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      cache: "no-store",
    });
    if (response.status === 401 && !opts.signingIn) {
      signOut("The token was refused (401). Sign in again.");
      throw new HttpError(401, "unauthorized");
    }
    if (!response.ok) {
      let detail = "";
      try {
        const body = await response.json();
        detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail || body);
      } catch (_) {
        detail = response.statusText;
      }
      throw new HttpError(response.status, detail);
    }
    return response;
  }

  // --- formatting ----------------------------------------------------------
  function sessionOf(item) {
    return item.session_id !== undefined && item.session_id !== null ? item.session_id : item.session;
  }

  function formatTime(value) {
    if (value === null || value === undefined || value === "") return "—";
    const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
    if (Number.isNaN(date.getTime())) return String(value);
    const today = new Date().toDateString() === date.toDateString();
    return today ? date.toLocaleTimeString() : date.toLocaleString();
  }

  function formatLeft(expiresAt) {
    const left = Math.round(Number(expiresAt) - Date.now() / 1000);
    if (!Number.isFinite(left)) return "no expiry";
    if (left <= 0) return "expiring…";
    const h = Math.floor(left / 3600);
    const m = Math.floor((left % 3600) / 60);
    const s = left % 60;
    if (h > 0) return h + "h " + m + "m left";
    if (m > 0) return m + "m " + String(s).padStart(2, "0") + "s left";
    return s + "s left";
  }

  // --- pending approvals ---------------------------------------------------
  function renderApprovals() {
    const root = $("pending");
    const byProfile = new Map();
    for (const a of state.approvals.values()) {
      if (!byProfile.has(a.profile)) byProfile.set(a.profile, []);
      byProfile.get(a.profile).push(a);
    }
    // Keep a card the user is typing a reason into: rebuild only what changed.
    const wanted = new Set(state.approvals.keys());
    for (const card of root.querySelectorAll("[data-approval-id]")) {
      if (!wanted.has(card.dataset.approvalId)) card.remove();
    }
    const names = [...byProfile.keys()].sort();
    for (const name of names) {
      let group = root.querySelector('[data-profile-group="' + CSS.escape(name) + '"]');
      if (!group) {
        group = el(
          "div",
          { class: "group", "data-profile-group": name, testid: "approval-group" },
          el("h3", {}, name, " ", el("span", { class: "count" }, "")),
          el("div", { class: "cards" }),
        );
        root.append(group);
      }
      const cards = group.querySelector(".cards");
      const items = byProfile.get(name).sort((x, y) => x.created_at - y.created_at);
      for (const a of items) {
        if (!cards.querySelector('[data-approval-id="' + CSS.escape(a.approval_id) + '"]')) {
          cards.append(approvalCard(a));
        }
      }
      group.querySelector("h3 .count").textContent = String(items.length);
    }
    for (const group of root.querySelectorAll("[data-profile-group]")) {
      if (!byProfile.has(group.dataset.profileGroup)) group.remove();
    }
    // Sorted groups: re-append in order (moves nodes, keeps their state).
    for (const name of names) {
      root.append(root.querySelector('[data-profile-group="' + CSS.escape(name) + '"]'));
    }
    $("pending-count").textContent = String(state.approvals.size);
    $("pending-empty").hidden = state.approvals.size > 0;
    tick();
  }

  function approvalCard(a) {
    const reasonId = "reason-" + a.approval_id;
    const reason = el("input", {
      id: reasonId,
      type: "text",
      class: "reason",
      placeholder: "reason (sent with Deny)",
      maxlength: 500,
      testid: "deny-reason",
    });
    const button = (testid, label, choice, cls, title) =>
      el(
        "button",
        {
          type: "button",
          class: cls,
          testid,
          title,
          "aria-label": label + ": " + a.command,
          // docs/gateway.md answers go to POST /v1/runs/{id}/approval: a request that
          // belongs to no run (an embedding runtime's turn) is shown, not answerable here.
          disabled: !a.run_id,
          onclick: () => answer(a, choice, card),
        },
        label,
      );
    const card = el(
      "article",
      { class: "card", testid: "approval-card", "data-approval-id": a.approval_id, "data-profile": a.profile },
      el(
        "div",
        { class: "meta" },
        el("span", { class: "tag", testid: "approval-profile" }, a.profile),
        el("span", {}, "session ", el("strong", { testid: "approval-session" }, sessionOf(a) || "—")),
        el("span", { class: "muted" }, "run ", a.run_id || "—"),
        el("span", { class: "left", testid: "time-left", "data-expires": a.expires_at }, ""),
      ),
      el("pre", { class: "command", testid: "approval-command" }, a.command),
      whyBlock(a),
      savesBlock(a),
      a.run_id ? null : el("p", { class: "muted" }, "Not started through the API: answer it where the turn runs."),
      el(
        "div",
        { class: "actions" },
        button("approve-once", "Approve once", "once", "ok", "Run this command this one time"),
        button("approve-session", "Approve for session", "session", "ok",
          "Allow matching commands for the rest of this session"),
        button("approve-always", "Always allow", "always", "warn",
          "Save the rule chosen below to this profile's permanent allowlist"),
        el("label", { class: "visually-hidden", for: reasonId }, "Reason for denying"),
        reason,
        button("deny", "Deny", "deny", "bad", "Refuse this command (the reason is sent to the agent)"),
      ),
    );
    return card;
  }

  // Where it would run and why it asks (docs/approvals.md#what-a-prompt-shows): every
  // danger with the part of the line it came from. Command text is hostile: it only
  // ever becomes a text node (el), never markup.
  function whyBlock(a) {
    const sentences = new Map((a.patterns || []).map((p) => [p.name, p.description]));
    // "Asks because" already gives the first pattern's sentence: it is said once.
    const told = a.because && (a.patterns || []).length ? a.patterns[0].name : null;
    const dangers = a.dangers || [];
    const patterns = dangers.length
      ? dangers.map((d) =>
          el("li", { testid: "approval-pattern", "data-pattern": d.pattern },
            el("code", {}, d.pattern), " ", d.pattern === told ? "" : sentences.get(d.pattern) || "",
            el("pre", { class: "segment", testid: "approval-segment" }, d.segment)),
        )
      : (a.patterns || []).map((p) =>
          el("li", { testid: "approval-pattern" }, el("code", {}, p.name), " ", p.description),
        );
    return el(
      "div",
      { class: "why", testid: "approval-why" },
      el("div", { class: "muted" }, "asked ",
        el("time", { testid: "approval-asked", "data-created": a.created_at }, formatAsked(a.created_at)),
        a.asked_by ? el("span", {}, " by ", el("strong", { testid: "approval-asked-by" }, a.asked_by)) : null,
        " · context ", el("strong", { testid: "approval-context" }, a.context || "—")),
      el("div", { class: "muted" }, "in ", el("code", { testid: "approval-cwd" }, a.cwd || "—"),
        " · ", el("span", { testid: "approval-backend" }, (a.backend || "?") + " backend"),
        a.sandbox ? el("span", {}, " · sandbox ", el("strong", { testid: "approval-sandbox" }, a.sandbox)) : null,
        a.network ? el("span", {}, " · network: ",
          el("span", { testid: "approval-network", "data-network": a.network }, networkWords(a))) : null),
      el("div", { class: "because" }, "Asks because: ",
        el("strong", { testid: "approval-because" }, a.because || a.reason || "a human must approve")),
      patterns.length ? el("ul", { class: "patterns" }, ...patterns) : null,
    );
  }

  // When a request was asked: the local time and how long ago (kept current by tick).
  function formatAsked(createdAt) {
    const at = Number(createdAt);
    if (!Number.isFinite(at)) return "—";
    const ago = Math.max(0, Math.round(Date.now() / 1000 - at));
    return new Date(at * 1000).toLocaleTimeString() + " (" + ago + " s ago)";
  }

  // terminal.network and the egress allow list, in the words the CLI uses.
  function networkWords(a) {
    const allow = a.egress_allow || [];
    if (a.network === "off") return "no network (loopback only)";
    if (a.network === "host") return "the host's network, no egress proxy";
    if (a.network !== "on") return a.network;
    if (!allow.length) return "out through the egress proxy, any public host";
    const more = allow.length > 3 ? " and " + (allow.length - 3) + " more" : "";
    return "out through the egress proxy to " + allow.slice(0, 3).join(", ") + more + " only";
  }

  // What "Always allow" saves (docs/approvals.md#suggestions): the exact rule by default, or a
  // narrower/wider one, each with how many recorded decisions it would have matched.
  function savesBlock(a) {
    const offered = a.suggestions || [];
    if (!offered.length) return null;
    const label = (s) =>
      s.rule + "  (" + s.matched + " matched" + (s.bind.length ? "; bound to " + s.bind.join(", ") : "") + ")";
    const choosable = offered.filter((s) => !s.redacted);
    const select = el(
      "select",
      { class: "always-rule", testid: "always-rule", "aria-label": "Rule that Always allow saves" },
      ...choosable.map((s) => el("option", { value: s.rule, selected: s.saves ? "" : null }, label(s))),
    );
    const fixed = offered.filter((s) => s.saves).map((s) => el("li", {}, el("code", {}, label(s))));
    return el(
      "div",
      { class: "saves", testid: "approval-saves" },
      el("span", { class: "muted" }, "Always allow saves: "),
      choosable.length > 1 ? select : el("ul", {}, ...fixed),
    );
  }

  async function answer(a, choice, card) {
    const buttons = card.querySelectorAll("button");
    buttons.forEach((b) => (b.disabled = true));
    const body = { approval_id: a.approval_id, choice };
    const picked = card.querySelector("select.always-rule");
    const saved = (a.suggestions || []).find((s) => s.saves);
    if (choice === "always" && picked && (!saved || picked.value !== saved.rule)) body.rule = picked.value;
    const reason = card.querySelector("input.reason").value.trim();
    if (choice === "deny" && reason) body.reason = reason;
    state.answeredHere.add(a.approval_id);
    try {
      await api("/v1/runs/" + encodeURIComponent(a.run_id) + "/approval", { method: "POST", body });
      toast(CHOICE_LABELS[choice] + ": " + short(a.command), choice === "deny" ? "bad" : "ok");
      state.approvals.delete(a.approval_id);
      renderApprovals();
      refreshDecisionsSoon();
    } catch (err) {
      if (err.status === 409 || err.status === 404) {
        toast("No longer open (answered or withdrawn elsewhere): " + short(a.command), "info");
        state.approvals.delete(a.approval_id);
        renderApprovals();
      } else if (err.status !== 401) {
        state.answeredHere.delete(a.approval_id);
        toast("Answer failed: " + err.message, "bad");
        buttons.forEach((b) => (b.disabled = false));
      }
    }
  }

  function tick() {
    for (const node of document.querySelectorAll("[data-expires]")) {
      node.textContent = formatLeft(node.dataset.expires);
    }
    for (const node of document.querySelectorAll("[data-created]")) {
      node.textContent = formatAsked(node.dataset.created);
    }
  }

  function addApproval(a) {
    // A late re-send of a request this tab already answered must not come back.
    if (!a || !a.approval_id || state.answeredHere.has(a.approval_id)) return;
    state.approvals.set(a.approval_id, a);
    renderApprovals();
  }

  function dropApproval(event, a) {
    if (!a || !state.approvals.has(a.approval_id)) return;
    const known = state.approvals.get(a.approval_id);
    state.approvals.delete(a.approval_id);
    renderApprovals();
    if (state.answeredHere.has(a.approval_id)) return;
    if (event === "approval.resolved") {
      const choice = a.choice || (a.answer && a.answer.choice);
      const label = CHOICE_LABELS[choice] || "Answered";
      toast(label + " elsewhere: " + short(known.command), choice === "deny" ? "bad" : "ok");
    } else if (event === "approval.gone") {
      toastGone(known);
    } else {
      const why = a.outcome === "timeout" ? "timed out" : a.cause || "withdrawn";
      toast("Not answered (" + why + "): " + short(known.command), "info");
    }
    refreshDecisionsSoon();
  }

  // Polling cannot tell how a request ended; the run can (docs/gateway.md GET /v1/runs/{id}).
  async function toastGone(a) {
    let decision = null;
    try {
      const run = await api("/v1/runs/" + encodeURIComponent(a.run_id));
      const last = run.results && run.results[run.results.length - 1];
      if (last && last.command === a.command) decision = last.decision;
    } catch (_) {
      // the run is gone or not ours: say only what we know
    }
    if (!decision) {
      toast("No longer pending (answered or withdrawn elsewhere): " + short(a.command), "info");
    } else if (decision.outcome === "cancelled" || decision.outcome === "timeout") {
      toast("Not answered (" + (decision.cause || decision.outcome) + "): " + short(a.command), "info");
    } else {
      const kind = decision.outcome === "approved" ? "ok" : "bad";
      toast(decision.outcome + " (" + decision.cause + "): " + short(a.command), kind);
    }
  }

  async function loadApprovals() {
    const list = await api("/v1/approvals?state=open");
    const seen = new Set();
    for (const a of list) {
      seen.add(a.approval_id);
      if (!state.answeredHere.has(a.approval_id)) state.approvals.set(a.approval_id, a);
    }
    for (const id of [...state.approvals.keys()]) {
      if (!seen.has(id)) dropApproval("approval.gone", { approval_id: id });
    }
    renderApprovals();
  }

  // --- profiles ------------------------------------------------------------
  // multiplex.yaml broken: the last good config serves (docs/operations.md#live-reconfiguration).
  async function loadConfigStatus() {
    const response = await fetch("/readyz", { cache: "no-store" });
    const body = await response.json().catch(() => ({}));
    const banner = $("config-error");
    const notes = [];
    if (body.config_error) {
      notes.push("multiplex.yaml was not applied; the last good config is serving: " + body.config_error);
    }
    if (body.restart_required && body.restart_required.length) {
      notes.push("Restart to apply " + body.restart_required.join(", ") + " (the running values stay until then).");
    }
    banner.hidden = notes.length === 0;
    banner.textContent = notes.join(" ");
  }

  // One page at a time (docs/gateway.md#profiles-decisions-identity): 10,000 homes
  // would be megabytes every 10 s. Search narrows by name on the server.
  async function loadProfiles() {
    loadConfigStatus().catch(() => {});
    const query = new URLSearchParams({ limit: String(PROFILES_PAGE), offset: String(state.profilesOffset) });
    if (state.profilesQuery) query.set("q", state.profilesQuery);
    const response = await request("/v1/profiles?" + query.toString());
    const rows = await response.json();
    const total = Number(response.headers.get("X-Total-Count") || rows.length);
    if (rows.length === 0 && state.profilesOffset > 0 && total > 0) {
      state.profilesOffset = Math.max(0, Math.floor((total - 1) / PROFILES_PAGE) * PROFILES_PAGE);
      return loadProfiles(); // the page emptied (profiles went away): show the last one
    }
    $("profiles-total").textContent = String(total);
    $("profiles-range").textContent =
      total === 0 ? "none" : `${state.profilesOffset + 1}–${state.profilesOffset + rows.length} of ${total}`;
    $("profiles-prev").disabled = state.profilesOffset === 0;
    $("profiles-next").disabled = state.profilesOffset + rows.length >= total;
    loadFatigue(rows.map((p) => p.name)).catch(() => {});
    const body = $("profiles");
    const dash = (v) => (v === null || v === undefined || v === "" ? "—" : v);
    // A broken profile's message gets a full-width row of its own: it names the
    // file, key and line (docs/configuration.md#configyaml-keys), too long for a table cell.
    body.replaceChildren(
      ...rows.flatMap((p) => [
        el(
          "tr",
          { testid: "profile-row", "data-profile": p.name, class: p.status === "ok" ? "" : "broken" },
          el("th", { scope: "row" }, p.name),
          el(
            "td",
            { testid: "profile-status" },
            el("span", { class: "badge " + (p.status === "ok" ? "ok" : "bad") }, p.status),
          ),
          el("td", { class: "num" }, dash(p.epoch)),
          el("td", { class: "nowrap" }, formatTime(p.last_reload)),
          el(
            "td",
            {},
            dash(p.backend),
            p.sandbox_warning
              ? el("span", { class: "badge bad", testid: "profile-sandbox-warning", title: p.sandbox_warning }, "unsandboxed")
              : p.sandbox
                ? el("span", { class: "muted", testid: "profile-sandbox" }, " · " + p.sandbox)
                : null,
          ),
          el("td", { class: "num" }, dash(p.allowlist_size)),
          el("td", { testid: "profile-fatigue", "data-fatigue-of": p.name }, "—"),
        ),
        p.error
          ? el(
              "tr",
              { class: "broken error-row", "data-error-of": p.name },
              el("td", { colspan: 7, class: "error-text", testid: "profile-error" }, p.error),
            )
          : null,
      ].filter(Boolean)),
    );
    labelCells(body);
  }

  // Fatigue over the last day (docs/approvals.md#fatigue): how often the profile
  // asks, how much of it is approved, how fast, and how much was hardly read.
  async function loadFatigue(names) {
    if (names.length === 0) return;
    const query = new URLSearchParams({ since: String(Date.now() / 1000 - 86400) });
    for (const name of names) query.append("profile", name);
    const rows = await (await request("/v1/decisions/summary?" + query.toString())).json();
    for (const f of rows) {
      const cell = document.querySelector(`[data-fatigue-of="${CSS.escape(f.profile)}"]`);
      if (!cell) continue;
      if (f.prompts === 0) {
        cell.textContent = "no prompts";
        continue;
      }
      const share = f.approved_share === null ? "none answered" : `${Math.round(f.approved_share * 100)}% approved`;
      const median = f.median_answer_s === null ? "" : `, median ${f.median_answer_s.toFixed(1)} s`;
      const fast = f.fast_answers ? `, ${f.fast_answers} under ${f.fast_answer_s} s` : "";
      cell.textContent = `${f.prompts_per_hour.toFixed(1)}/h, ${share}${median}${fast}`;
      cell.title = `${f.prompts} prompts in the last day; ${f.unanswered} unanswered`;
    }
  }

  // --- decisions -----------------------------------------------------------
  // An approved command that could not start (docs/gateway.md#runs): its run failed,
  // and the result says why. Keyed by profile and (redacted) command line.
  async function loadNotRun() {
    const notRun = new Map();
    const failed = await api("/v1/runs?status=failed&limit=20").catch(() => []);
    const docs = await Promise.all(
      failed
        .filter((r) => r.error)
        .map((r) => api("/v1/runs/" + encodeURIComponent(r.run_id)).catch(() => null)),
    );
    for (const run of docs) {
      for (const result of (run && run.results) || []) {
        const key = run.profile + "\n" + result.command;
        if (result.error && !notRun.has(key)) notRun.set(key, result.error);
      }
    }
    return notRun;
  }

  async function loadDecisions() {
    const [rows, notRun] = await Promise.all([api("/v1/decisions?limit=50"), loadNotRun()]);
    $("decisions").replaceChildren(
      ...rows.map((d) => {
        const failedToStart = d.outcome === "approved" ? notRun.get(d.profile + "\n" + d.command) : null;
        const label = failedToStart ? "approved, did not run" : OUTCOME_LABELS[d.outcome] || d.outcome;
        const detail = d.outcome === "cancelled" || d.outcome === "timeout" ? d.outcome : null;
        return el(
          "tr",
          { testid: "decision-row", "data-outcome": d.outcome, "data-profile": d.profile },
          el("td", { class: "nowrap" }, formatTime(d.ts)),
          el("td", {}, d.profile, el("div", { class: "muted" }, sessionOf(d) || "")),
          el("td", {}, el("code", { class: "command-inline", testid: "decision-command" }, d.command)),
          el(
            "td",
            {},
            el(
              "span",
              { class: "badge outcome-" + (failedToStart ? "failed" : d.outcome), testid: "decision-outcome" },
              label,
            ),
            detail ? el("div", { class: "muted" }, detail === "timeout" ? "timed out" : "cancelled") : null,
          ),
          el(
            "td",
            { testid: "decision-cause" },
            d.cause || "",
            d.rule ? el("div", { class: "muted" }, "rule: " + d.rule) : null,
            failedToStart ? el("div", { class: "error-text", testid: "decision-not-run" }, failedToStart) : null,
          ),
          el("td", { testid: "decision-by" }, d.decided_by || ""),
        );
      }),
    );
    $("decisions-empty").hidden = rows.length > 0;
    labelCells($("decisions"));
    loadRuns().catch(() => {});
  }

  // --- runs ------------------------------------------------------------------
  // docs/gateway.md#runs: the newest runs, with why a failed one failed.
  async function loadRuns() {
    const rows = await api("/v1/runs?limit=20");
    rows.sort((a, b) => (b.created_at || 0) - (a.created_at || 0));
    $("runs").replaceChildren(
      ...rows.map((r) =>
        el(
          "tr",
          { testid: "run-row", "data-run": r.run_id, "data-status": r.status },
          el("td", { class: "nowrap" }, formatTime(r.created_at)),
          el("td", {}, r.profile, el("div", { class: "muted" }, r.session_id || "")),
          el("td", {}, el("span", { class: "badge outcome-" + r.status, testid: "run-status" }, r.status)),
          el(
            "td",
            {},
            ...(r.commands || []).map((c) => el("div", {}, el("code", { class: "command-inline" }, c))),
          ),
          el(
            "td",
            { testid: "run-detail" },
            r.error ? el("div", { class: "error-text" }, r.error) : null,
            r.pending_approval ? el("div", { class: "muted" }, "waiting: " + r.pending_approval) : null,
          ),
          el("td", { class: "muted run-id" }, r.run_id),
        ),
      ),
    );
    $("runs-empty").hidden = rows.length > 0;
    labelCells($("runs"));
  }

  function scheduleDecisions(delay) {
    clearTimeout(state.decisionsTimer);
    state.decisionsTimer = setTimeout(() => loadDecisions().catch(reportLoadError), delay);
  }

  // After an approval event the decision line is written by the run's thread a
  // moment later: look now-ish and once more shortly after.
  function refreshDecisionsSoon() {
    scheduleDecisions(300);
    clearTimeout(state.decisionsLate);
    state.decisionsLate = setTimeout(() => loadDecisions().catch(() => {}), 1500);
  }

  // A reload event (a home's config.yaml, or many of them saved by one script): one
  // page load for a burst, not one per home.
  function scheduleProfiles() {
    if (state.profilesSoon) return;
    state.profilesSoon = setTimeout(() => {
      state.profilesSoon = null;
      loadProfiles().catch(() => {});
    }, 250);
  }

  function reportLoadError(err) {
    if (err && err.status !== 401) toast("Refresh failed: " + err.message, "bad");
  }

  // --- live updates ----------------------------------------------------------
  function setLive(text, kind) {
    const node = $("live");
    node.textContent = text;
    node.className = "live " + kind;
  }

  // The stream is read with fetch() rather than EventSource so the token goes
  // in the Authorization header: a token in the URL would land in access logs
  // and browser history.
  const STREAM_HANDLERS = {
    "approval.request": (data) => addApproval(data),
    "approval.resolved": (data) => dropApproval("approval.resolved", data || {}),
    "approval.cancelled": (data) => dropApproval("approval.cancelled", data || {}),
    "command.finished": () => scheduleDecisions(300),
    "run.finished": () => scheduleDecisions(300),
    "profile.reloaded": () => scheduleProfiles(),
    "config.reloaded": () => loadConfigStatus().catch(() => {}),
  };

  // One SSE frame (the lines before a blank line), per the text/event-stream format.
  function dispatchFrame(frame) {
    let name = "message";
    const data = [];
    for (const raw of frame.split("\n")) {
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (!line || line.startsWith(":")) continue; // comments are keep-alives
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    const handler = STREAM_HANDLERS[name];
    if (!handler || data.length === 0) return;
    let payload = null;
    try {
      payload = JSON.parse(data.join("\n"));
    } catch (_) {
      return;
    }
    handler(payload);
  }

  async function connectStream() {
    closeStream();
    const controller = new AbortController();
    state.stream = controller;
    try {
      const response = await fetch("/v1/events", {
        headers: { Authorization: "Bearer " + state.token, Accept: "text/event-stream" },
        cache: "no-store",
        signal: controller.signal,
      });
      if (response.status === 401) {
        signOut("The token was refused (401). Sign in again.");
        return;
      }
      if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
      stopPolling();
      setLive("live", "ok");
      // The stream re-sends open requests; a full reload also drops any that
      // ended while we were disconnected.
      loadApprovals().catch(reportLoadError);
      scheduleDecisions(0);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          dispatchFrame(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
      throw new Error("stream ended");
    } catch (_) {
      if (controller.signal.aborted) return; // closed on purpose (sign-out, reconnect)
      // Fall back to polling at once and retry the stream later.
      state.stream = null;
      startPolling();
      state.sseRetryTimer = setTimeout(connectStream, SSE_RETRY_MS);
    }
  }

  function closeStream() {
    clearTimeout(state.sseRetryTimer);
    if (state.stream) state.stream.abort();
    state.stream = null;
  }

  function startPolling() {
    if (state.pollTimer) return;
    setLive("polling every 2 s", "warn");
    let round = 0;
    state.pollTimer = setInterval(() => {
      round += 1;
      loadApprovals().catch(() => {});
      if (round % 3 === 0) loadDecisions().catch(() => {});
    }, POLL_MS);
  }

  function stopPolling() {
    clearInterval(state.pollTimer);
    state.pollTimer = null;
  }

  // --- sign in / out -----------------------------------------------------------
  async function signIn(token, remember) {
    state.token = token;
    $("signin-error").textContent = "";
    let who;
    try {
      who = await api("/v1/whoami", { signingIn: true });
    } catch (err) {
      state.token = null;
      sessionStorage.removeItem(TOKEN_KEY);
      $("signin-error").textContent =
        err.status === 401 ? "That token was not accepted." : "Sign-in failed: " + err.message;
      return;
    }
    if (remember) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY); // in page memory only
    state.whoami = who;
    $("who-text").textContent = who.role === "admin" ? "admin (all profiles)" : "profile " + who.profile;
    $("signin").hidden = true;
    $("app").hidden = false;
    $("who").hidden = false;
    $("token").value = "";
    await Promise.all([loadApprovals(), loadProfiles(), loadDecisions()]).catch(reportLoadError);
    connectStream();
    // Reloads arrive as events (profile.reloaded, config.reloaded); this slow poll
    // covers a dropped stream, and reconciles decisions in case a run.finished was missed.
    state.profilesTimer = setInterval(() => {
      loadProfiles().catch(() => {});
      scheduleDecisions(0);
    }, PROFILES_EVERY_MS);
    state.tickTimer = setInterval(tick, 1000);
  }

  function signOut(message) {
    closeStream();
    stopPolling();
    clearInterval(state.profilesTimer);
    clearTimeout(state.profilesSoon);
    state.profilesSoon = null;
    clearInterval(state.tickTimer);
    clearTimeout(state.decisionsTimer);
    clearTimeout(state.decisionsLate);
    sessionStorage.removeItem(TOKEN_KEY);
    state.token = null;
    state.whoami = null;
    state.approvals.clear();
    state.answeredHere.clear();
    $("pending").replaceChildren();
    $("profiles").replaceChildren();
    state.profilesOffset = 0;
    state.profilesQuery = "";
    $("profiles-search").value = "";
    $("decisions").replaceChildren();
    $("runs").replaceChildren();
    $("app").hidden = true;
    $("who").hidden = true;
    $("signin").hidden = false;
    $("signin-error").textContent = message || "";
    setLive("offline", "");
    $("token").focus();
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("signin-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const token = $("token").value.trim();
      if (token) signIn(token, $("remember").checked);
    });
    $("sign-out").addEventListener("click", () => signOut("Signed out."));
    $("profiles-prev").addEventListener("click", () => {
      state.profilesOffset = Math.max(0, state.profilesOffset - PROFILES_PAGE);
      loadProfiles().catch(reportLoadError);
    });
    $("profiles-next").addEventListener("click", () => {
      state.profilesOffset += PROFILES_PAGE;
      loadProfiles().catch(reportLoadError);
    });
    $("profiles-search").addEventListener("input", () => {
      // Typed letters are coalesced: one request once the typing pauses.
      clearTimeout(state.profilesSearchTimer);
      state.profilesSearchTimer = setTimeout(() => {
        state.profilesQuery = $("profiles-search").value.trim();
        state.profilesOffset = 0;
        loadProfiles().catch(reportLoadError);
      }, 200);
    });
    const saved = sessionStorage.getItem(TOKEN_KEY);
    $("remember").checked = Boolean(saved);
    if (saved) signIn(saved, true);
    else $("token").focus();
  });
})();
