// Every page: times with their zone (relative, the absolute one on hover),
// how long each pending action has waited, and the agents page's auto-mode
// confirmation.
(function () {
  "use strict";
  var units = [[86400, "day"], [3600, "h"], [60, "min"]];
  function ago(secs) {
    if (secs < 45) return "just now";
    for (var i = 0; i < units.length; i++) {
      if (secs >= units[i][0]) {
        var n = Math.floor(secs / units[i][0]);
        return n + " " + units[i][1] + (units[i][1] === "day" && n !== 1 ? "s" : "") + " ago";
      }
    }
    return "just now";
  }
  function waited(secs) {
    if (secs < 60) return "waiting less than a minute";
    var h = Math.floor(secs / 3600), m = Math.floor((secs % 3600) / 60);
    if (h >= 48) return "waiting " + Math.floor(h / 24) + " days";
    return "waiting " + (h ? h + " h " : "") + m + " min";
  }
  function absolute(d) {
    try {
      return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium", timeZoneName: "short" });
    } catch (e) { return d.toString(); }
  }
  function times(root) {
    var now = Date.now();
    Array.prototype.forEach.call((root || document).querySelectorAll("time[datetime]"), function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d)) return;
      t.title = absolute(d);
      var secs = (now - d.getTime()) / 1000;
      t.textContent = secs < 7 * 86400 ? ago(Math.max(0, secs)) : absolute(d);
    });
    Array.prototype.forEach.call((root || document).querySelectorAll(".waited[data-since]"), function (w) {
      var d = new Date(w.dataset.since);
      if (!isNaN(d)) w.textContent = waited(Math.max(0, (now - d.getTime()) / 1000));
    });
  }
  window.braboTimes = times;
  times();
  setInterval(times, 30000);
  document.addEventListener("htmx:afterSwap", function (ev) {
    times(ev.target && ev.target.parentNode ? ev.target.parentNode : document);
    var f = document.querySelector("[data-autofocus]");
    if (f && ev.target && ev.target.contains && ev.target.contains(f)) f.focus();
  });
  // Auto mode asks first, and says what it frees; Cancel leaves it off.
  document.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var toggle = t.closest("button.toggle[aria-controls]");
    if (toggle) {
      var box = document.getElementById(toggle.getAttribute("aria-controls"));
      if (!box) return;
      box.hidden = false;
      toggle.setAttribute("aria-expanded", "true");
      var cancel = box.querySelector("button.cancel");
      if (cancel) cancel.focus();
      return;
    }
    var cancelBtn = t.closest(".confirm button.cancel");
    if (cancelBtn) {
      var c = cancelBtn.closest(".confirm");
      c.hidden = true;
      var tg = document.querySelector('button.toggle[aria-controls="' + c.id + '"]');
      if (tg) { tg.setAttribute("aria-expanded", "false"); tg.focus(); }
    }
  });
})();

// The approval queue, live: a stream of action events adds the card of a
// new pending action and drops the card of one decided elsewhere. No
// reload and no polling: after each (re)connection the list is merged once,
// to cover what happened while the stream was away.
(function () {
  "use strict";
  var queue = document.getElementById("queue");
  if (!queue) return;
  var base = "brabo — approval queue";
  // The queue is shown a page at a time. The count is the true number of
  // pending actions: the cards on this page, and offPage, the others as the
  // server counted them at the last merge (a change on another page asks
  // for a merge).
  var page = Number(queue.dataset.page) || 1;
  var size = Number(queue.dataset.pageSize) || 100;

  function cards() { return queue.querySelectorAll("article.card"); }
  var offPage = Math.max(0, (Number(queue.dataset.total) || 0) - cards().length);

  function recount() {
    var n = cards().length;
    var total = offPage + n;
    document.title = total ? "(" + total + ") " + base : base;
    var count = document.getElementById("queue-count");
    if (count) count.textContent = String(total);
    var empty = document.getElementById("queue-empty");
    if (n === 0 && !empty) {
      empty = document.createElement("p");
      empty.id = "queue-empty";
      empty.className = "empty";
      empty.textContent = "Nothing waits for a decision.";
      queue.appendChild(empty);
    } else if (n > 0 && empty) {
      empty.remove();
    }
  }

  function parse(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }

  function get(url) {
    return fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true" } }).then(function (r) {
      if (r.status === 401) { window.location.href = "/login"; return null; }
      return r.ok ? r.text() : null;
    });
  }

  function place(el, before) {
    queue.insertBefore(el, before);
    htmx.process(el);
    if (window.braboTimes) window.braboTimes(el);
  }

  // newer says whether card a comes before card b in the queue's order,
  // the server's: newest first by creation time (microseconds), then by
  // id. Not by id alone: ids begin with the millisecond, and two actions
  // proposed in the same one would be in random order.
  // A risky card (data-risk, brabo.Risks) comes before any other, as the
  // server sorts a page.
  function newer(a, b) {
    var ra = risky(a), rb = risky(b);
    if (ra !== rb) return ra;
    var ca = Number(a.dataset.created), cb = Number(b.dataset.created);
    return ca !== cb ? ca > cb : a.id > b.id;
  }

  // olderThan finds the first card that el goes before, whatever order the
  // cards' fetches finish in.
  function olderThan(el) {
    var all = cards();
    for (var i = 0; i < all.length; i++) {
      if (newer(el, all[i])) return all[i];
    }
    var empty = document.getElementById("queue-empty");
    return empty || null;
  }

  function risky(el) { return !!el.dataset.risk && el.dataset.risk !== "0"; }

  // The second key: on a risky card the first a arms it and says so; a
  // second a within armFor approves it. Any other key, or another card,
  // disarms it.
  var armFor = 10000;
  function disarm() {
    Array.prototype.forEach.call(queue.querySelectorAll("article.card[data-armed]"), function (c) {
      delete c.dataset.armed;
      var hint = c.querySelector(".risk-armed");
      if (hint) hint.remove();
    });
  }
  function arm(card) {
    disarm();
    card.dataset.armed = String(Date.now());
    var hint = document.createElement("p");
    hint.className = "risk-armed";
    hint.setAttribute("role", "alert");
    hint.textContent = "Risky: press a again to approve it; any other key cancels.";
    var banner = card.querySelector(".risk-banner");
    (banner || card).appendChild(hint);
  }
  function armed(card) {
    var t = Number(card.dataset.armed || 0);
    return t > 0 && Date.now() - t < armFor;
  }

  // busy says whether a card's own decision is in flight: its answer (the
  // real result) replaces it, so nothing else removes it meanwhile.
  function busy(el) { return !!el.querySelector(".htmx-request"); }

  // addCard puts a new pending action's card on the first page (the newest
  // are there), keeping the page to its size; later pages only recount.
  function addCard(id) {
    if (document.getElementById("card-" + id)) return;
    if (page !== 1) { later(); return; }
    get("/ui/cards/" + encodeURIComponent(id)).then(function (html) {
      if (!html) return;
      var el = parse(html).querySelector("article.card");
      if (!el || el.dataset.status !== "pending" || document.getElementById(el.id)) return;
      place(el, olderThan(el));
      notifyHidden(el);
      var all = cards();
      if (all.length > size && !busy(all[all.length - 1])) {
        all[all.length - 1].remove(); // the oldest goes to the next page
        offPage++;
      }
      recount();
    });
  }

  // dropCard removes the card of an action decided elsewhere. A card not
  // on this page is counted again by a merge.
  function dropCard(id) {
    var el = document.getElementById("card-" + id);
    if (!el) { later(); return; }
    if (!busy(el)) { el.remove(); recount(); }
  }

  // Browser notifications: when the tab is hidden, a new pending card
  // says so on the desktop (once the person allowed it: the button asks,
  // since a browser only asks from a click).
  var notifyBtn = document.getElementById("notify-me");
  function canNotify() { return "Notification" in window && Notification.permission === "granted"; }
  if (notifyBtn && "Notification" in window && Notification.permission === "default") {
    notifyBtn.hidden = false;
    notifyBtn.addEventListener("click", function () {
      Notification.requestPermission().then(function () { notifyBtn.hidden = Notification.permission !== "default"; });
    });
  }
  window.braboNotified = [];
  function notifyHidden(el) {
    if (!document.hidden) return;
    var title = el.querySelector("h2");
    var subj = el.querySelector(".subject");
    var flags = el.querySelector(".flags");
    var text = (subj ? subj.textContent.trim() : "") + (flags ? "\nTouches: " + flags.textContent.replace(/\s+/g, " ").trim() : "");
    var head = "brabo: " + (title ? title.textContent.replace(/\s+/g, " ").trim() : "an action") + " waits";
    window.braboNotified.push(head);
    if (!canNotify()) return;
    try {
      var n = new Notification(head, { body: text.slice(0, 300), tag: el.id });
      n.onclick = function () { window.focus(); el.focus(); n.close(); };
    } catch (e) { /* a browser that only notifies from a service worker */ }
  }

  // Keys: j/k move between cards, a approves, d opens deny with the
  // reason focused, x selects, ? lists the keys.
  var keys = document.getElementById("keys");
  var keysBtn = document.getElementById("keys-help");
  function toggleKeys(show) {
    if (!keys) return;
    keys.hidden = show === undefined ? !keys.hidden : !show;
    if (keysBtn) keysBtn.setAttribute("aria-expanded", String(!keys.hidden));
  }
  if (keysBtn) keysBtn.addEventListener("click", function () { toggleKeys(); });
  function current() {
    var a = document.activeElement;
    return a && a.closest ? a.closest("#queue article.card") : null;
  }
  function focusCard(el) {
    if (!el) return;
    if (!el.dataset.armed) disarm();
    Array.prototype.forEach.call(cards(), function (c) { c.classList.remove("focused"); });
    el.classList.add("focused");
    el.focus();
    el.scrollIntoView({ block: "nearest" });
  }
  function move(step) {
    var all = Array.prototype.slice.call(cards());
    if (!all.length) return;
    var i = all.indexOf(current());
    if (i < 0) { focusCard(all[step > 0 ? 0 : all.length - 1]); return; }
    focusCard(all[Math.min(all.length - 1, Math.max(0, i + step))]);
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var t = ev.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) {
      if (ev.key === "Escape" && t.blur) t.blur();
      return;
    }
    var card = current();
    if (ev.key !== "a") disarm();
    switch (ev.key) {
      case "j": move(1); break;
      case "k": move(-1); break;
      case "?": toggleKeys(); break;
      case "Escape": toggleKeys(false); break;
      case "a": {
        var ap = card && card.querySelector("button.approve");
        if (!ap || ap.disabled) return;
        if (risky(card) && !armed(card)) { arm(card); break; }
        disarm();
        ap.click();
        break;
      }
      case "d": {
        var dn = card && card.querySelector("fieldset.decide button.deny");
        if (dn && !dn.disabled) dn.click(); else return;
        break;
      }
      case "x": {
        var box = card && card.querySelector("input.select");
        if (box && !box.disabled) { box.checked = !box.checked; box.dispatchEvent(new Event("change", { bubbles: true })); } else return;
        break;
      }
      default: return;
    }
    ev.preventDefault();
  });
  // A card that leaves (decided) hands the focus to the next one.
  queue.addEventListener("htmx:beforeSwap", function (ev) {
    var el = ev.detail && ev.detail.target;
    if (el && el.matches && el.matches("article.card") && el === current()) {
      var all = Array.prototype.slice.call(cards());
      var i = all.indexOf(el);
      queue.dataset.refocus = (all[i + 1] || all[i - 1] || {}).id || "";
      queue.dataset.refocusFrom = el.id;
    }
  });
  function refocus() {
    var id = queue.dataset.refocus;
    if (id && !document.getElementById(queue.dataset.refocusFrom || "")) {
      delete queue.dataset.refocus;
      focusCard(document.getElementById(id));
    }
  }

  // Several cards of one type decided together: each is still decided on
  // its own on the server, with its own role check and record.
  var bulk = document.getElementById("bulk");
  function selected() { return Array.prototype.slice.call(queue.querySelectorAll("input.select:checked")); }
  function syncBulk() {
    var sel = selected();
    var kind = sel.length ? sel[0].closest("article.card").dataset.type : "";
    Array.prototype.forEach.call(queue.querySelectorAll("input.select"), function (b) {
      var other = kind && b.closest("article.card").dataset.type !== kind;
      b.disabled = !!other;
      b.title = other ? "Select cards of one type: " + kind : "";
    });
    if (!bulk) return;
    bulk.hidden = sel.length === 0;
    var count = document.getElementById("bulk-count");
    if (count) count.textContent = sel.length + " " + kind + " selected";
  }
  queue.addEventListener("change", function (ev) { if (ev.target.matches("input.select")) syncBulk(); });
  var csrf = "";
  try { csrf = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRF-Token"] || ""; } catch (e) { csrf = ""; }
  if (bulk) {
    document.getElementById("bulk-clear").addEventListener("click", function () {
      selected().forEach(function (b) { b.checked = false; });
      syncBulk();
    });
    bulk.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var btn = ev.submitter;
      var body = new URLSearchParams();
      // Each card's revision beside its id: what the card showed is what
      // is approved (a card that changed since is refused, card_changed).
      selected().forEach(function (b) {
        body.append("id", b.value);
        var rev = b.closest("article.card").querySelector("input[name=revision]");
        body.append("revision", rev ? rev.value : "");
      });
      body.append("decision", btn ? btn.value : "approve");
      body.append("reason", bulk.querySelector("input[name=reason]").value);
      Array.prototype.forEach.call(bulk.querySelectorAll("button"), function (b) { b.disabled = true; });
      fetch("/ui/bulk", { method: "POST", credentials: "same-origin", body: body,
        headers: { "X-CSRF-Token": csrf, "HX-Request": "true" } }).then(function (r) {
        var done = (r.headers.get("X-Decided") || "").split(",").filter(Boolean);
        return r.text().then(function (html) { return { html: html, done: done }; });
      }).then(function (got) {
        var flash = document.getElementById("flash");
        var fresh = parse(got.html).querySelector("#flash, .refusal");
        if (flash && fresh) {
          flash.className = fresh.id === "flash" ? fresh.className : "flash bad";
          flash.innerHTML = fresh.innerHTML;
        }
        got.done.forEach(function (id) { var c = document.getElementById("card-" + id); if (c) c.remove(); });
        bulk.querySelector("input[name=reason]").value = "";
        syncBulk();
        recount();
      }).finally(function () {
        Array.prototype.forEach.call(bulk.querySelectorAll("button"), function (b) { b.disabled = false; });
      });
    });
  }

  // later merges once, a second after the last change it was asked for:
  // a flood of proposals costs one fetch of the list, not one per action.
  var pendingMerge = null;
  function later() {
    if (pendingMerge) clearTimeout(pendingMerge);
    pendingMerge = setTimeout(function () { pendingMerge = null; merge(); }, 1000);
  }

  function merge() {
    fetch("/ui/queue?page=" + page, { credentials: "same-origin", headers: { "HX-Request": "true" } }).then(function (r) {
      if (r.status === 401) { window.location.href = "/login"; return null; }
      if (!r.ok) return null;
      var n = Number(r.headers.get("X-Queue-Total"));
      return r.text().then(function (html) { return { html: html, total: n }; });
    }).then(function (got) {
      if (!got) return;
      var html = got.html;
      var fresh = Array.prototype.slice.call(parse(html).querySelectorAll("article.card"));
      var keep = {};
      fresh.forEach(function (el) { keep[el.id] = true; });
      Array.prototype.forEach.call(cards(), function (el) { if (!keep[el.id] && !busy(el)) el.remove(); });
      var prev = null;
      fresh.forEach(function (el) {
        var have = document.getElementById(el.id);
        if (have) { prev = have; return; }
        place(el, prev ? prev.nextSibling : queue.firstChild);
        prev = el;
      });
      offPage = Math.max(0, (got.total || 0) - cards().length);
      recount();
    });
  }

  var settled = {
    "proposed_action.approved": true, "proposed_action.denied": true,
    "action.executed": true, "action.failed": true
  };
  var stream = new EventSource("/ui/stream");
  stream.addEventListener("open", merge);
  stream.addEventListener("action", function (ev) {
    var d = JSON.parse(ev.data);
    if (d.type === "proposed_action.created" && d.status === "pending") addCard(d.actionId);
    else if (settled[d.type]) dropCard(d.actionId);
  });
  // Any change of the list (a decision's answer, a card fetched, one
  // dropped) recounts; htmx's own events do not reach the page from a card
  // that its swap removed.
  new MutationObserver(function () { recount(); refocus(); }).observe(queue, { childList: true });
  // For the browser tests: the stream, and the merge a (re)connection runs.
  window.braboStream = stream;
  window.braboMerge = merge;
})();
