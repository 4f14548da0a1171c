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
  bar.textContent = n === 0 ? 'Tick cards, then set for all of them:' : `${n} selected — set for all of them:`
}
document.addEventListener('change', (event) => {
  if (event.target.matches && event.target.matches('input[name="event_ids"][form="bulk"]')) countTicked()
})
document.addEventListener('submit', async (event) => {
  const form = event.target
  if (!(form instanceof window.HTMLFormElement) || !form.hasAttribute('data-inplace') || form.getAttribute('aria-busy') === 'true') return
  event.preventDefault()
  const body = new URLSearchParams(new FormData(form, event.submitter))
  // A form element outside the form (the cards' checkboxes belong to the bulk bar) is in FormData already.
  const focusKey = focusKeyOf(document.activeElement) || (event.submitter && focusKeyOf(event.submitter))
  const ticked = [...document.querySelectorAll('input[name="event_ids"][form="bulk"]:checked')].map((box) => box.value)
  form.setAttribute('aria-busy', 'true')
  let res
  try {
    res = await fetch(form.action, { method: 'POST', body, credentials: 'same-origin' })
  } catch {
    form.removeAttribute('aria-busy')
    form.submit()
    return
  }
  const here = new URL(window.location.href)
  const there = new URL(res.url)
  if (!res.ok || there.pathname !== here.pathname) {
    // Not the board again (signed out, an error page): show what the server answered.
    window.location.assign(res.url)
    return
  }
  const page = new window.DOMParser().parseFromString(await res.text(), 'text/html')
  const main = page.querySelector('main')
  if (!main) {
    window.location.assign(res.url)
    return
  }
  document.querySelector('main').replaceWith(document.adoptNode(main))
  localizeTimes(main)
  // What was just applied to all of them is not selected any more; otherwise the ticks stay.
  if (form.id !== 'bulk') {
    for (const id of ticked) {
      const box = document.querySelector(`input[name="event_ids"][form="bulk"][value="${id}"]`)
      if (box) box.checked = true
    }
  }
  countTicked()
  const target = focusKey && document.querySelector(focusKey)
  if (target) target.focus()
})
