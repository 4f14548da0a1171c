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
for (const el of document.querySelectorAll('time[datetime]')) {
  const when = new Date(el.getAttribute('datetime'))
  if (Number.isNaN(when.getTime())) continue
  try {
    // (dateStyle cannot be combined with timeZoneName: the fields one by one.)
    el.title = when.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit', timeZoneName: 'short' })
    if (/^\d{4}-\d{2}-\d{2}$/.test(el.textContent.trim())) el.textContent = when.toLocaleDateString(undefined, { dateStyle: 'medium' })
  } catch { /* an old browser: the UTC title stays */ }
}

// A new project's time zone defaults to the viewer's own, when the form still shows the default.
for (const select of document.querySelectorAll('select[data-local-default="true"]')) {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone
  if (zone && [...select.options].some((o) => o.value === zone)) select.value = zone
}
