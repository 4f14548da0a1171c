// Progressive enhancement only: every page works without it.
document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-copy]')
  if (!button) return
  const source = document.querySelector(button.dataset.copy)
  if (!source) return
  try {
    await navigator.clipboard.writeText(source.textContent.trim())
    button.textContent = 'Copied'
  } catch {
    const range = document.createRange()
    range.selectNodeContents(source)
    const selection = window.getSelection()
    selection.removeAllRanges()
    selection.addRange(range)
    button.textContent = 'Press Ctrl+C'
  }
})

// Times: the server writes <time datetime="ISO" title="exact UTC">3 h ago</time>; here the exact
// time on hover is restated in the viewer's own zone (and a bare date, for older times, too).
// Run again on what the board redraws in place.
const localizeTimes = (root) => {
  for (const el of root.querySelectorAll('time[datetime]')) {
    const when = new Date(el.getAttribute('datetime'))
    if (Number.isNaN(when.getTime())) continue
    try {
      // (dateStyle cannot be combined with timeZoneName: the fields one by one.)
      el.title = when.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit', timeZoneName: 'short' })
      if (/^\d{4}-\d{2}-\d{2}$/.test(el.textContent.trim())) el.textContent = when.toLocaleDateString(undefined, { dateStyle: 'medium' })
    } catch { /* an old browser: the UTC title stays */ }
  }
}
localizeTimes(document)

// A new project's time zone defaults to the viewer's own, when the form still shows the default.
for (const select of document.querySelectorAll('select[data-local-default="true"]')) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone
  if (zone && [...select.options].some((o) => o.value === zone)) select.value = zone
}

// Review board (issue 15). Forms marked data-inplace (a card's status/evaluation, the bulk bar)
// are plain forms that work without this; here they post in the background and the board is
// redrawn from the page the server answers with (its counts, columns and message), keeping
// the ticked cards and the keyboard focus where they were.
const focusKeyOf = (el) => {
  if (!el || !el.form) return null
  const which = el.name ? `[name="${el.name}"]` : el.matches('button') ? 'button[type="submit"]' : null
  if (!which) return null
  const card = el.closest('[data-event-id]')
  if (card) return `[data-event-id="${card.dataset.eventId}"] ${which}`
  if (el.form.id) return `#${el.form.id} ${which}`
  return null
}
const countTicked = () => {
  const bar = document.querySelector('#bulk .bulk-count')
  if (!bar) return
  const n = document.querySelectorAll('input[name="event_ids"][form="bulk"]:checked').length
  bar.textContent = n === 0 ? 'Tick cards to set a status or an evaluation for several at once.' : `${n} selected — set for all of them:`
  // On a phone the bar's choices wait for a ticked card (CSS); the words say what to do.
  bar.parentElement.toggleAttribute('data-none', n === 0)
}
document.addEventListener('change', (event) => {
  if (event.target.matches && event.target.matches('input[name="event_ids"][form="bulk"]')) countTicked()
})
/** A message for screen readers (a polite live region outside <main>, which redraws replace). */
const announce = (text) => {
  let region = document.getElementById('live-status')
  if (!region) {
    region = document.createElement('div')
    region.id = 'live-status'
    region.className = 'sr-only'
    region.setAttribute('aria-live', 'polite')
    document.body.append(region)
  }
  region.textContent = ''
  window.setTimeout(() => { region.textContent = text }, 30)
}
/** A message at the top of <main>, as the server's flash would show it. */
const showMessage = (text, kind) => {
  const main = document.querySelector('main')
  for (const old of main.querySelectorAll(':scope > .flash')) old.remove()
  const p = document.createElement('p')
  p.className = `flash ${kind}`
  p.setAttribute('role', 'status')
  p.textContent = text
  main.prepend(p)
  announce(text)
}

/**
 * POSTs a form body and redraws <main> from the page the server answers with (the board again,
 * after its redirect). 'ok' or 'refused' (the page says why in its flash), 'network' when the
 * server could not be reached (nothing redrawn), 'away' when the answer is another page (shown).
 */
const postAndRedraw = async (action, body, { keepTicks = true, focusKey = null } = {}) => {
  const ticked = [...document.querySelectorAll('input[name="event_ids"][form="bulk"]:checked')].map((box) => box.value)
  let res
  try {
    res = await fetch(action, { method: 'POST', body, credentials: 'same-origin' })
  } catch {
    return 'network'
  }
  const here = new URL(window.location.href)
  const there = new URL(res.url)
  if (!res.ok || there.pathname !== here.pathname) {
    // Not the board again (signed out, an error page): show what the server answered.
    window.location.assign(res.url)
    return 'away'
  }
  const page = new window.DOMParser().parseFromString(await res.text(), 'text/html')
  const main = page.querySelector('main')
  if (!main) {
    window.location.assign(res.url)
    return 'away'
  }
  document.querySelector('main').replaceWith(document.adoptNode(main))
  localizeTimes(main)
  // What was just applied to all of them is not selected any more; otherwise the ticks stay.
  if (keepTicks) {
    for (const id of ticked) {
      const box = document.querySelector(`input[name="event_ids"][form="bulk"][value="${window.CSS.escape(id)}"]`)
      if (box) box.checked = true
    }
  }
  countTicked()
  initBoard()
  const flashed = main.querySelector('.flash')
  if (flashed) announce(flashed.textContent.trim())
  const target = focusKey && document.querySelector(focusKey)
  if (target) target.focus()
  return flashed && flashed.classList.contains('error') ? 'refused' : 'ok'
}

document.addEventListener('submit', async (event) => {
  const form = event.target
  if (!(form instanceof window.HTMLFormElement) || !form.hasAttribute('data-inplace') || form.getAttribute('aria-busy') === 'true') return
  event.preventDefault()
  const body = new URLSearchParams(new FormData(form, event.submitter))
  // A form element outside the form (the cards' checkboxes belong to the bulk bar) is in FormData already.
  const focusKey = focusKeyOf(document.activeElement) || (event.submitter && focusKeyOf(event.submitter))
  const inPanel = form.closest('#card-panel')
  form.setAttribute('aria-busy', 'true')
  const outcome = await postAndRedraw(form.action, body, { keepTicks: form.id !== 'bulk', focusKey: inPanel ? null : focusKey })
  if (outcome === 'network') {
    form.removeAttribute('aria-busy')
    form.submit()
    return
  }
  form.removeAttribute('aria-busy')
  if (inPanel && outcome !== 'away') {
    // Saved (or refused) from the card's panel: the board behind says so. The review form goes
    // back to the card; a triage form (tags, assignee, merge) shows the card again in the panel,
    // as it is now, at the same field (to add another tag).
    const id = inPanel.dataset.eventId
    const card = cardById(id)
    if (form.hasAttribute('data-panel-form') && card && card.offsetParent !== null) {
      const again = form.classList.contains('tag-add') ? 'form.tag-add input[name="add"]' : form.classList.contains('assign-form') ? 'form.assign-form select' : null
      await openPanel(card, again)
      return
    }
    inPanel.close()
    if (card) setCurrent(card)
  }
})

// ---- The board (issue 28): compact cards, keyboard triage, the card panel, drag and drop ----
// Without this script every card is a link to the opportunity's page (its review form, its
// history) and the bulk bar is a plain form. With it: j/k move between cards, o/Enter open a
// card in a panel over the board, 1–6 set its status and u/n/0 its evaluation (posting the same
// review form, with the version the card was shown at), x ticks it, ? lists the keys; and a
// card dragged to another column (wide screens) posts its new status. Either way the board is
// redrawn from the server's answer: a card someone else changed meanwhile is refused (the
// message says so) and shown where it really is.
const boardEl = () => document.querySelector('.board[data-triage]')
const cardById = (id) => (id ? document.querySelector(`.board article.mini[data-event-id="${window.CSS.escape(id)}"]`) : null)
const visibleCards = () => [...document.querySelectorAll('.board[data-triage] article.mini')].filter((c) => c.offsetParent !== null)
let currentId = null
const setCurrent = (card, focus = true) => {
  for (const old of document.querySelectorAll('.board article.mini.current')) old.classList.remove('current')
  if (!card) return
  card.classList.add('current')
  currentId = card.dataset.eventId
  const link = card.querySelector('a.open')
  if (focus && link && !(panelEl() && panelEl().open)) link.focus({ preventScroll: true })
  card.scrollIntoView({ block: 'nearest', inline: 'nearest' })
}
const currentCard = () => {
  const card = cardById(currentId)
  return card && card.offsetParent !== null ? card : null
}
const canDrag = () => window.matchMedia('(min-width: 701px)').matches
function initBoard() {
  const board = boardEl()
  if (!board) return
  countTicked()
  const hint = document.getElementById('shortcut-hint')
  if (hint) hint.hidden = false
  for (const card of board.querySelectorAll('article.mini')) card.draggable = canDrag()
  const card = cardById(currentId)
  if (card) card.classList.add('current')
}
initBoard()
window.matchMedia('(min-width: 701px)').addEventListener('change', initBoard)
// On a phone the search and filters fold away when none is set (the summary opens them).
for (const box of document.querySelectorAll('details.filter-box:not([data-filtered])')) {
  if (window.matchMedia('(max-width: 700px)').matches) box.open = false
}

const panelEl = () => document.getElementById('card-panel')
const panel = () => {
  let dialog = panelEl()
  if (dialog) return dialog
  dialog = document.createElement('dialog')
  dialog.id = 'card-panel'
  dialog.className = 'panel'
  dialog.setAttribute('aria-label', 'Opportunity')
  const bar = document.createElement('div')
  bar.className = 'panel-bar'
  const full = document.createElement('a')
  full.className = 'panel-full'
  full.textContent = 'Open as a page'
  const close = document.createElement('button')
  close.type = 'button'
  close.className = 'secondary'
  close.textContent = 'Close'
  close.addEventListener('click', () => dialog.close())
  const keys = document.createElement('span')
  keys.className = 'muted panel-keys'
  keys.textContent = 'j/k next · 1–6 status · u/n/0 evaluation · a assign me · t tag · Esc close'
  bar.append(full, keys, close)
  const body = document.createElement('div')
  body.className = 'panel-body'
  dialog.append(bar, body)
  dialog.addEventListener('close', () => {
    const card = currentCard()
    if (card) card.querySelector('a.open').focus()
  })
  document.body.append(dialog)
  return dialog
}
/**
 * The card's page, shown in the panel; its review form and its triage forms (tags, assignee,
 * merge, unmerge) then post in place and return to this board. `focus`: a selector in the panel
 * to put the focus on (else its "Open as a page" link).
 */
const openPanel = async (card, focus = null) => {
  const link = card.querySelector('a.open')
  setCurrent(card, false)
  let res
  try {
    res = await fetch(link.href, { credentials: 'same-origin' })
  } catch {
    window.location.assign(link.href)
    return
  }
  const detail = res.ok && new window.DOMParser().parseFromString(await res.text(), 'text/html').querySelector('article.detail')
  if (!detail) {
    window.location.assign(link.href)
    return
  }
  for (const form of detail.querySelectorAll('form.review-detail, form[data-panel-form]')) {
    form.setAttribute('data-inplace', '')
    const back = form.querySelector('input[name="back"]')
    if (back) back.value = boardEl().dataset.back
  }
  detail.removeAttribute('id')
  const dialog = panel()
  dialog.dataset.eventId = card.dataset.eventId
  const heading = detail.querySelector('h1')
  if (heading) dialog.setAttribute('aria-label', heading.textContent.trim().slice(0, 120))
  dialog.querySelector('.panel-full').href = link.href
  dialog.querySelector('.panel-body').replaceChildren(document.adoptNode(detail))
  localizeTimes(dialog)
  if (!dialog.open) dialog.showModal()
  const target = focus && dialog.querySelector(focus)
  if (target) {
    target.scrollIntoView({ block: 'center' })
    target.focus()
  } else {
    dialog.querySelector('.panel-body').scrollTop = 0
    dialog.querySelector('.panel-full').focus()
  }
  announce(`Opened: ${heading ? heading.textContent.trim().slice(0, 120) : 'opportunity'}`)
}

document.addEventListener('click', (event) => {
  if (!boardEl()) return
  const help = event.target.closest('[data-shortcuts]')
  if (help) {
    const dialog = document.getElementById('shortcuts')
    if (dialog && !dialog.open) dialog.showModal()
    return
  }
  // A status tab on a phone: the column shown changes without a reload (the link still says where).
  const tab = event.target.closest('.column-switch a[data-col]')
  if (tab) {
    event.preventDefault()
    for (const a of document.querySelectorAll('.column-switch a[data-col]')) {
      const on = a === tab
      a.classList.toggle('on', on)
      if (on) a.setAttribute('aria-current', 'true')
      else a.removeAttribute('aria-current')
    }
    for (const col of document.querySelectorAll('.board section.column')) col.classList.toggle('current', col.dataset.status === tab.dataset.col)
    window.history.replaceState(null, '', tab.href)
    return
  }
  // A card's link opens it in the panel (a new tab or window still gets the page).
  const open = event.target.closest('.board article.mini a.open')
  if (open && event.button === 0 && !event.ctrlKey && !event.metaKey && !event.shiftKey && !event.altKey) {
    event.preventDefault()
    void openPanel(open.closest('article.mini'))
  }
})
document.addEventListener('focusin', (event) => {
  const card = event.target.closest && event.target.closest('.board article.mini')
  if (card && card.dataset.eventId !== currentId) setCurrent(card, false)
})

/** Sets one review field of a card by posting its review form (with the card's version); the board is redrawn. */
const reviewCard = async (card, field, value) => {
  const label = field === 'evaluation' ? `Evaluation ${value === '' ? 'none' : value.replace('_', ' ')}` : `Status ${value}`
  if ((card.dataset[field] || '') === value) {
    announce(`${label} already.`)
    return
  }
  await postCard(card, 'review', { [`orig_${field}`]: card.dataset[field] || '', [field]: value })
}

/** `a`: the card to me, or (when it is mine) to nobody — the assign form, with the card's version. */
const assignCard = async (card) => {
  const mine = card.dataset.assignee !== '' && card.dataset.assignee === boardEl().dataset.me
  await postCard(card, 'assign', mine ? { assignee: '' } : { me: '1' })
}

/** Posts one of a card's forms (`review`, `assign`, …) with its version; the board is redrawn, the card (and its panel) kept. */
const postCard = async (card, what, fields) => {
  const id = card.dataset.eventId
  const board = boardEl()
  const csrf = document.querySelector('input[name="_csrf"]')
  const body = new URLSearchParams({ _csrf: csrf ? csrf.value : '', back: board.dataset.back, version: card.dataset.version, ...fields })
  card.setAttribute('aria-busy', 'true')
  const index = visibleCards().indexOf(card)
  const outcome = await postAndRedraw(`${board.dataset.reviewBase}${encodeURIComponent(id)}/${what}`, body)
  if (outcome === 'network') {
    card.removeAttribute('aria-busy')
    showMessage('Not saved: the server could not be reached. Try again.', 'error')
    return
  }
  if (outcome === 'away') return
  // The card where it is now (another column, for a new status); on a phone, where it went may
  // be out of sight: then the card that took its place.
  const cards = visibleCards()
  const now = cardById(id)
  const next = now && now.offsetParent !== null ? now : cards[Math.min(Math.max(index, 0), cards.length - 1)]
  if (next) setCurrent(next)
  const dialog = panelEl()
  if (dialog && dialog.open && next) await openPanel(next)
}

document.addEventListener('keydown', (event) => {
  const board = boardEl()
  if (!board || event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return
  const target = event.target
  // Typing: no shortcut.
  if (target.closest && target.closest('input, select, textarea, [contenteditable]:not([contenteditable="false"])')) return
  const help = document.getElementById('shortcuts')
  if (event.key === '?') {
    event.preventDefault()
    if (help.open) help.close()
    else help.showModal()
    return
  }
  if (help && help.open) return
  const dialog = panelEl()
  const inPanel = dialog && dialog.open
  const cards = visibleCards()
  const current = currentCard()
  const step = (by) => {
    if (cards.length === 0) return
    const at = current ? cards.indexOf(current) : -1
    const next = cards[at === -1 ? 0 : Math.min(Math.max(at + by, 0), cards.length - 1)]
    setCurrent(next)
    if (inPanel) void openPanel(next)
  }
  const column = (by) => {
    const columns = [...board.querySelectorAll('section.column')].filter((c) => c.offsetParent !== null && c.querySelector('article.mini'))
    if (columns.length === 0) return
    const here = current ? current.closest('section.column') : null
    const at = here ? columns.indexOf(here) : -1
    const col = columns[Math.min(Math.max(at + by, 0), columns.length - 1)]
    const inCol = [...col.querySelectorAll('article.mini')]
    const row = here ? [...here.querySelectorAll('article.mini')].indexOf(current) : 0
    setCurrent(inCol[Math.min(row, inCol.length - 1)])
  }
  const statuses = [...board.querySelectorAll('section.column')].map((c) => c.dataset.status)
  const key = event.key
  // Links and buttons keep their own Enter (a card's link opens it); the arrows keep scrolling in the panel.
  if (inPanel && key.startsWith('Arrow')) return
  if (key === 'j' || key === 'ArrowDown') step(1)
  else if (key === 'k' || key === 'ArrowUp') step(-1)
  else if (!inPanel && (key === 'h' || key === 'ArrowLeft')) column(-1)
  else if (!inPanel && (key === 'l' || key === 'ArrowRight')) column(1)
  else if (key === 'o' || (key === 'Enter' && !target.closest('a, button'))) {
    if (!current) return
    void openPanel(current)
  } else if (/^[1-9]$/.test(key) && statuses[Number(key) - 1]) {
    if (current) void reviewCard(current, 'status', statuses[Number(key) - 1])
  } else if (key === 'u' || key === 'n' || key === '0') {
    if (current) void reviewCard(current, 'evaluation', { u: 'useful', n: 'not_useful', 0: '' }[key])
  } else if (key === 'a') {
    if (current) void assignCard(current)
  } else if (key === 't') {
    // The tag field of the card's panel (opened for it if needed).
    if (!current) return
    const input = inPanel && dialog.dataset.eventId === current.dataset.eventId && dialog.querySelector('form.tag-add input[name="add"]')
    if (input) input.focus()
    else void openPanel(current, 'form.tag-add input[name="add"]')
  } else if (key === 'x') {
    const box = current && current.querySelector('input[name="event_ids"]')
    if (!box) return
    box.checked = !box.checked
    box.dispatchEvent(new Event('change', { bubbles: true }))
    announce(box.checked ? 'Selected.' : 'Not selected.')
  } else return
  event.preventDefault()
})

// Drag and drop between status columns (wide screens; the card's page and the bulk bar do the
// same without it): the card moves at once, then the board is redrawn from the server's answer.
let dragged = null
document.addEventListener('dragstart', (event) => {
  const card = event.target.closest && event.target.closest('.board article.mini')
  if (!card) return
  dragged = card
  event.dataTransfer.effectAllowed = 'move'
  event.dataTransfer.setData('text/plain', card.dataset.eventId)
  card.classList.add('dragging')
})
const dropColumn = (event) => {
  const col = dragged && event.target.closest && event.target.closest('.board section.column')
  return col && col.dataset.status !== dragged.dataset.status ? col : null
}
document.addEventListener('dragover', (event) => {
  const col = dropColumn(event)
  if (!col) return
  event.preventDefault()
  event.dataTransfer.dropEffect = 'move'
  for (const other of document.querySelectorAll('.board section.column.drop-target')) if (other !== col) other.classList.remove('drop-target')
  col.classList.add('drop-target')
})
document.addEventListener('dragleave', (event) => {
  const col = event.target.closest && event.target.closest('.board section.column')
  if (col && !col.contains(event.relatedTarget)) col.classList.remove('drop-target')
})
document.addEventListener('dragend', () => {
  for (const el of document.querySelectorAll('.board .drop-target, .board .dragging')) el.classList.remove('drop-target', 'dragging')
  dragged = null
})
document.addEventListener('drop', async (event) => {
  const col = dropColumn(event)
  if (!col) return
  event.preventDefault()
  const card = dragged
  dragged = null
  for (const el of document.querySelectorAll('.board .drop-target, .board .dragging')) el.classList.remove('drop-target', 'dragging')
  const from = card.parentElement
  const before = card.nextSibling
  const list = col.querySelector('.cards-scroll')
  list.prepend(card)
  const status = col.dataset.status
  const id = card.dataset.eventId
  const outcome = await postAndRedraw(`${boardEl().dataset.reviewBase}${encodeURIComponent(id)}/review`, new URLSearchParams({
    _csrf: document.querySelector('input[name="_csrf"]').value, back: boardEl().dataset.back, version: card.dataset.version, orig_status: card.dataset.status, status,
  }))
  if (outcome === 'network') {
    from.insertBefore(card, before)
    showMessage(`Not moved to ${status}: the server could not be reached. Try again.`, 'error')
    return
  }
  // Refused (someone changed it meanwhile): the redrawn board shows it where it is, and why.
  const now = cardById(id)
  if (now) setCurrent(now)
})
