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
  }

  // newer says whether card a comes before card b in the queue's order,
  // the server's: newest first by creation time (microseconds), then by
  // id. Not by id alone: ids begin with the millisecond, and two actions
  // proposed in the same one would be in random order.
  function newer(a, b) {
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
  new MutationObserver(recount).observe(queue, { childList: true });
  // For the browser tests: the stream, and the merge a (re)connection runs.
  window.braboStream = stream;
  window.braboMerge = merge;
})();
