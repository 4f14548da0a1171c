// The triage board (ui://growthdesk/board): the opportunities of a list_opportunities result, as
// many to a page as fit in 500 px, each with its review buttons. A review goes through
// review_opportunity_from_view (the app-only tool: review_opportunity's checks, history and
// webhooks) and the row is redrawn in place from its result; a refusal is shown, not thrown.
import { callTool, connectView, drawnHeight, h, heightLimit, readResult, say } from './view.js'

const STATUSES = ['pending', 'reviewing', 'contacted', 'adopted', 'ignored', 'done']
const LABELS = { pending: 'Pending', reviewing: 'Reviewing', contacted: 'Contacted', adopted: 'Adopted', ignored: 'Ignored', done: 'Done', useful: 'Useful', not_useful: 'Not useful' }
/** The most rows a page shows; fewer when they do not fit (see fit). */
const MOST_ROWS = 6
const REVIEW_TOOL = 'review_opportunity_from_view'

const $ = (id) => document.getElementById(id)
const rowsNode = $('rows')
const statusNode = $('status')

const state = {
  input: {},
  /** The listing's items loaded so far, and where the first of them stands in the whole list. */
  items: [],
  offset: 0,
  total: 0,
  nextCursor: null,
  /** The first item shown, the pages before it (for Previous), how many the page shows. */
  start: 0,
  history: [],
  shown: 0,
  /** The row whose status choices or note editor is open: { id, kind }. */
  editing: null,
  /** The note being written, kept across redraws. */
  draft: undefined,
  busy: new Set(),
  failed: new Set(),
  loading: false,
  context: {},
  /** Where the next redraw puts the focus (a control's data-key), when an action says. */
  focusKey: null,
}

const typeLabel = (type) => type.replaceAll('_', ' ')

function stateLabel(item) {
  return [LABELS[item.status] ?? item.status, item.evaluation ? LABELS[item.evaluation] : null, item.review_note ? 'noted' : null].filter(Boolean).join(' · ')
}

function receivedLabel(iso) {
  const when = new Date(iso)
  if (Number.isNaN(when.getTime())) return ''
  const locale = state.context.locale
  const minutes = Math.round((Date.now() - when.getTime()) / 60000)
  try {
    if (minutes >= 0 && minutes < 60 * 24 * 7) {
      const rtf = new Intl.RelativeTimeFormat(locale, { numeric: 'auto', style: 'short' })
      if (minutes < 60) return rtf.format(-minutes, 'minute')
      if (minutes < 60 * 24) return rtf.format(-Math.round(minutes / 60), 'hour')
      return rtf.format(-Math.round(minutes / 1440), 'day')
    }
    return when.toLocaleDateString(locale, { month: 'short', day: 'numeric', year: when.getFullYear() === new Date().getFullYear() ? undefined : 'numeric', timeZone: state.context.timeZone })
  } catch {
    return iso.slice(0, 10)
  }
}

function filtersLabel(input) {
  const parts = []
  if (input.status && input.status !== 'all') parts.push(LABELS[input.status] ?? input.status)
  if (input.evaluation && input.evaluation !== 'all') parts.push(LABELS[input.evaluation] ?? input.evaluation)
  if (input.type && input.type !== 'all') parts.push(typeLabel(input.type))
  if (input.date === 'today') parts.push('today')
  if (input.q) parts.push(`“${input.q}”`)
  return parts.join(' · ')
}

function renderSummary() {
  const filters = filtersLabel(state.input)
  const count = state.loading ? 'loading…' : `${state.total} in all`
  $('summary').textContent = [filters || 'All', count].join(' · ')
}

/** A button that keeps the focus across redraws (`key`). */
function button(key, label, attributes, onclick) {
  return h('button', { type: 'button', 'data-key': key, text: label, onclick, ...attributes })
}

function defaultActions(item, busy) {
  const id = item.event_id
  const evaluate = (value) => () => review(item, { evaluation: item.evaluation === value ? '' : value }, `${id}:${value}`)
  return h('div', { class: 'actions', role: 'group', 'aria-label': `Review ${shortText(item)}` },
    button(`${id}:useful`, 'Useful', { 'aria-pressed': String(item.evaluation === 'useful'), disabled: busy }, evaluate('useful')),
    button(`${id}:not_useful`, 'Not useful', { 'aria-pressed': String(item.evaluation === 'not_useful'), disabled: busy }, evaluate('not_useful')),
    button(`${id}:status`, `${LABELS[item.status] ?? item.status} ▾`, { 'aria-label': `Status: ${LABELS[item.status] ?? item.status}. Change it`, 'aria-expanded': 'false', disabled: busy }, () => openEditor(item, 'status')),
    button(`${id}:note`, 'Note', { 'aria-label': item.review_note ? 'Edit the note' : 'Add a note', 'aria-expanded': 'false', disabled: busy }, () => openEditor(item, 'note')))
}

function statusChoices(item, busy) {
  const id = item.event_id
  return h('div', { class: 'actions choices', role: 'group', 'aria-label': `Status of ${shortText(item)}`, onkeydown: closeOnEscape(item) },
    STATUSES.map((status) => button(`${id}:set:${status}`, LABELS[status], { 'aria-pressed': String(item.status === status), disabled: busy },
      () => item.status === status ? closeEditor(item) : review(item, { status }, `${id}:status`))),
    button(`${id}:cancel`, 'Cancel', { disabled: busy }, () => closeEditor(item)))
}

function noteEditor(item, busy) {
  const id = item.event_id
  const field = h('textarea', { id: `note-${id}`, maxlength: '2000', 'data-key': `${id}:text`, disabled: busy })
  field.value = state.draft ?? item.review_note
  field.addEventListener('input', () => { state.draft = field.value })
  field.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) save()
  })
  const save = () => review(item, { note: field.value }, `${id}:note`)
  return h('div', { class: 'note-editor', onkeydown: closeOnEscape(item) },
    h('label', { for: `note-${id}`, text: `Note on ${shortText(item)} (at most 2000 characters)` }),
    field,
    button(`${id}:save`, 'Save note', { disabled: busy }, save),
    button(`${id}:cancel`, 'Cancel', { disabled: busy }, () => closeEditor(item)))
}

const shortText = (item) => (item.key_information.length > 60 ? `${item.key_information.slice(0, 57)}…` : item.key_information)
const closeOnEscape = (item) => (event) => {
  if (event.key === 'Escape') closeEditor(item)
}

function rowNode(item) {
  const id = item.event_id
  const busy = state.busy.has(id)
  const editing = state.editing?.id === id ? state.editing.kind : null
  const meta = h('p', { class: 'meta' },
    h('span', { class: 'type', text: typeLabel(item.contribution_type) }),
    h('span', { text: receivedLabel(item.received_at) }),
    h('span', { class: 'state', text: stateLabel(item) }))
  const row = h('li', { class: `row${editing ? ' editing' : ''}${state.failed.has(id) ? ' failed' : ''}`, 'data-id': id, 'aria-busy': busy ? 'true' : undefined })
  if (editing === 'status') row.append(meta, statusChoices(item, busy))
  else if (editing === 'note') row.append(meta, noteEditor(item, busy))
  else row.append(h('div', { class: 'info' }, meta, h('p', { class: 'text', title: item.key_information, text: item.key_information })), defaultActions(item, busy))
  return row
}

/** Draws the rows from `start`, as many as fit the height limit (the row being edited always shows). */
function render() {
  renderSummary()
  const limit = heightLimit(state.context)
  // The focus goes where an action asked for it, else stays on the same control, redrawn.
  const focusKey = state.focusKey ?? document.activeElement?.dataset?.key
  state.focusKey = null
  const draw = (count) => {
    rowsNode.replaceChildren(...state.items.slice(state.start, state.start + count).map(rowNode))
    if (state.items.length === 0 && !state.loading && $('problem').hidden) rowsNode.append(h('li', { class: 'row muted', text: 'No opportunities match these filters.' }))
    state.shown = Math.min(count, Math.max(0, state.items.length - state.start))
    drawPager()
  }
  let count = MOST_ROWS
  draw(count)
  while (drawnHeight() > limit && count > 1) {
    const editingIndex = state.items.findIndex((item) => item.event_id === state.editing?.id)
    // The row being edited is last on the page: the page starts one later instead.
    if (editingIndex === state.start + count - 1) state.start++
    count--
    draw(count)
  }
  const focus = focusKey && document.querySelector(`[data-key="${window.CSS.escape(focusKey)}"]`)
  if (focus && document.activeElement !== focus) focus.focus()
}

function drawPager() {
  const pager = $('pager')
  pager.hidden = !$('problem').hidden
  const first = state.offset + state.start + 1
  const last = state.offset + state.start + state.shown
  $('range').textContent = state.shown > 0 ? `${first}–${last} of ${state.total}` : ''
  $('previous').disabled = state.history.length === 0 || state.loading
  $('next').disabled = state.loading || !(state.start + state.shown < state.items.length || state.nextCursor)
}

function openEditor(item, kind) {
  state.editing = { id: item.event_id, kind }
  state.draft = undefined
  state.focusKey = kind === 'status' ? `${item.event_id}:set:${item.status}` : `${item.event_id}:text`
  render()
}

function closeEditor(item) {
  const kind = state.editing?.kind
  state.editing = null
  state.draft = undefined
  state.focusKey = `${item.event_id}:${kind ?? 'status'}`
  render()
}

async function review(item, change, focusKey) {
  const id = item.event_id
  const clicked = document.activeElement?.dataset?.key
  state.busy.add(id)
  say(statusNode, 'Saving…')
  render()
  const project = state.input.project
  const { data, error } = await callTool(view.app, REVIEW_TOOL, { ...(project ? { project } : {}), event_id: id, ...change })
  state.busy.delete(id)
  // Saved: the focus goes where the review leads (the editor closes); refused: it stays put.
  state.focusKey = error ? clicked : focusKey
  if (error) {
    state.failed.add(id)
    say(statusNode, `Not saved: ${error}`, 'error')
  } else {
    state.failed.delete(id)
    for (const field of ['evaluation', 'status', 'review_note', 'review_updated_at']) item[field] = data[field]
    state.editing = null
    state.draft = undefined
    say(statusNode, `Saved: ${stateLabel(item)}.`, 'done')
  }
  render()
}

async function next() {
  const after = state.start + state.shown
  if (after >= state.items.length && state.nextCursor) {
    state.loading = true
    say(statusNode, 'Loading more…')
    render()
    const { page: _page, after: _after, ...filters } = state.input
    const { data, error } = await callTool(view.app, 'list_opportunities', { ...filters, page_size: state.pageSize, after: state.nextCursor })
    state.loading = false
    if (error) {
      say(statusNode, `Could not load more: ${error}`, 'error')
      render()
      return
    }
    state.items.push(...data.items)
    state.total = data.total
    state.nextCursor = data.next_cursor
    say(statusNode, '')
  }
  if (after >= state.items.length) return render()
  state.history.push(state.start)
  state.start = after
  state.editing = null
  state.focusKey = 'next'
  render()
}

function previous() {
  if (state.history.length === 0) return
  state.start = state.history.pop()
  state.editing = null
  state.focusKey = 'previous'
  render()
}

function showListing(result) {
  const { data, error } = readResult(result)
  state.loading = false
  $('problem').hidden = !error
  $('problem').textContent = error ?? ''
  if (!error) {
    state.items = data.items ?? []
    state.total = data.total ?? state.items.length
    state.offset = ((data.page ?? 1) - 1) * (data.page_size ?? 0)
    state.pageSize = data.page_size
    state.nextCursor = data.next_cursor ?? null
  } else {
    state.items = []
    state.total = 0
  }
  state.start = 0
  state.history = []
  state.editing = null
  render()
}

$('next').dataset.key = 'next'
$('previous').dataset.key = 'previous'
$('next').addEventListener('click', next)
$('previous').addEventListener('click', previous)
// A new width changes how many rows fit (heights follow from the rows, so only widths count).
let width = 0
window.addEventListener('resize', () => {
  if (window.innerWidth === width) return
  width = window.innerWidth
  render()
})

const view = await connectView('board', {
  onInput(args) {
    state.input = args
    state.loading = true
    render()
  },
  onResult: showListing,
  onCancelled(reason) {
    state.loading = false
    $('problem').hidden = false
    $('problem').textContent = `The listing was cancelled${reason ? `: ${reason}` : '.'}`
    render()
  },
  onContext(context) {
    state.context = context
    render()
  },
})
