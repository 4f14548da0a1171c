// The daily chart (ui://growthdesk/daily-ops): a get_daily_ops result as three small bar charts
// (registrations, daily users, events), today's bar hatched and outlined while the day is not
// over. 7 days / 30 days call get_daily_ops again through the host and redraw in place.
import { callTool, connectView, h, readResult, say } from './view.js'

const SVG_NS = 'http://www.w3.org/2000/svg'
const SERIES = [
  { id: 's1', label: 'Registrations', unit: 'registrations', value: (d) => d.registered_users },
  { id: 's2', label: 'Daily users', unit: 'daily users', value: (d) => d.daily_use_users },
  { id: 's3', label: 'Events', unit: 'events', value: (d) => d.signup_events + d.daily_use_events, detail: (d) => ` (${d.signup_events} signup, ${d.daily_use_events} daily use)` },
]
const BARS_HEIGHT = 52
const TOP = 8
const LEFT = 30
const X_LABELS = 16

const $ = (id) => document.getElementById(id)
const state = { input: {}, data: null, context: {}, loading: false }

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag)
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) node.setAttribute(key, String(value))
  for (const child of children.flat()) if (child) node.append(child)
  return node
}

/** A round top for the axis: 1, 2 or 5 × 10^n, at least the maximum (and at least 1). */
function niceMax(max) {
  if (max <= 1) return 1
  const magnitude = 10 ** Math.floor(Math.log10(max))
  return [1, 2, 5, 10].map((m) => m * magnitude).find((top) => top >= max)
}

/** Today's date (YYYY-MM-DD) in the project's time zone, from this device's clock. */
function todayIn(timeZone) {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date())
  } catch {
    return new Date().toISOString().slice(0, 10)
  }
}

function dayLabel(date, style) {
  try {
    return new Date(`${date}T12:00:00Z`).toLocaleDateString(state.context.locale, { ...style, timeZone: 'UTC' })
  } catch {
    return date.slice(5)
  }
}

const number = (n) => n.toLocaleString(state.context.locale)

function chart(series, days, width, partial, withDates) {
  const values = days.map(series.value)
  const top = niceMax(Math.max(0, ...values))
  const plot = Math.max(40, width - LEFT - 4)
  const slot = plot / days.length
  const barWidth = Math.max(2, Math.min(28, slot * 0.72))
  const height = TOP + BARS_HEIGHT + (withDates ? X_LABELS + 2 : 2)
  const base = TOP + BARS_HEIGHT
  const y = (v) => base - (v / top) * BARS_HEIGHT
  const hatch = `hatch-${series.id}`
  const nodes = [
    svg('defs', {}, svg('pattern', { id: hatch, width: 5, height: 5, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
      svg('rect', { width: 2.5, height: 5, class: series.id }))),
    // Today's column is shaded behind its bar, so a day that has barely begun still shows.
    partial && svg('rect', { class: 'band', x: (LEFT + (days.length - 1) * slot).toFixed(1), y: TOP, width: slot.toFixed(1), height: BARS_HEIGHT }),
    svg('line', { class: 'grid', x1: LEFT, x2: LEFT + plot, y1: TOP, y2: TOP }),
    svg('line', { class: 'grid', x1: LEFT, x2: LEFT + plot, y1: y(top / 2), y2: y(top / 2) }),
    svg('text', { x: LEFT - 5, y: TOP + 4, 'text-anchor': 'end' }, number(top)),
    svg('text', { x: LEFT - 5, y: base + 1, 'text-anchor': 'end' }, '0'),
  ]
  days.forEach((day, i) => {
    const value = values[i]
    const isToday = partial && i === days.length - 1
    const x = LEFT + i * slot + (slot - barWidth) / 2
    const barHeight = Math.max(isToday ? 3 : 0, base - y(value))
    const title = `${dayLabel(day.date, { weekday: 'short', month: 'short', day: 'numeric' })}${isToday ? ' (today, so far)' : ''}: ${number(value)} ${series.unit}${series.detail ? series.detail(day) : ''}`
    if (barHeight > 0) {
      nodes.push(svg('rect', {
        x: x.toFixed(1),
        y: (base - barHeight).toFixed(1),
        width: barWidth.toFixed(1),
        height: barHeight.toFixed(1),
        rx: 1.5,
        class: isToday ? `${series.id} today` : series.id,
        'data-day': day.date
      }, svg('title', {}, title)))
    } else {
      nodes.push(svg('rect', { x: x.toFixed(1), y: TOP, width: barWidth.toFixed(1), height: BARS_HEIGHT, fill: 'transparent', 'data-day': day.date }, svg('title', {}, title)))
    }
  })
  nodes.push(svg('line', { class: 'axis', x1: LEFT, x2: LEFT + plot, y1: base + 0.5, y2: base + 0.5 }))
  if (withDates) {
    // As many date labels as fit (about 46 px each), always the last day.
    const every = Math.max(1, Math.ceil(46 / slot))
    days.forEach((day, i) => {
      const last = i === days.length - 1
      if (!last && (i % every !== 0 || days.length - 1 - i < every)) return
      const label = last && partial ? 'Today' : dayLabel(day.date, { month: 'short', day: 'numeric' })
      // Centred under its bar, but never past the chart's right edge.
      const x = Math.min(LEFT + i * slot + slot / 2, LEFT + plot - 18)
      nodes.push(svg('text', { x: x.toFixed(1), y: base + X_LABELS, 'text-anchor': 'middle', class: last && partial ? 'now' : undefined }, label))
    })
  }
  const total = values.reduce((a, b) => a + b, 0)
  return svg('svg', {
    class: 'chart',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': `${series.label}: ${number(total)} over ${days.length} days, at most ${number(Math.max(0, ...values))} a day${partial ? `, today so far ${number(values.at(-1))}` : ''}`
  }, nodes)
}

function render() {
  const { data } = state
  // A from/to range answers window null: neither button is pressed.
  const shown = data ? data.window : state.input.from ? null : (state.input.window ?? '7d')
  for (const button of document.querySelectorAll('[data-window]')) {
    button.setAttribute('aria-pressed', String(button.dataset.window === shown))
    button.disabled = state.loading || !data
  }
  if (!data) return
  const days = data.days ?? []
  const partial = days.length > 0 && days.at(-1).date === todayIn(data.timezone)
  const project = state.input.project ? `${state.input.project} · ` : ''
  $('summary').textContent = days.length > 0
    ? `${project}${days.length} days to ${dayLabel(days.at(-1).date, { month: 'short', day: 'numeric' })} · ${data.timezone}`
    : `${project}no days`
  const panels = $('panels')
  const width = Math.floor(panels.getBoundingClientRect().width) || 300
  panels.replaceChildren(...SERIES.map((series, i) => {
    const values = days.map(series.value)
    const total = values.reduce((a, b) => a + b, 0)
    const figures = `${number(total)} in ${days.length} days${partial ? ` · today ${number(values.at(-1))} so far` : ''}`
    return h('section', { class: 'panel', 'aria-labelledby': `h-${series.id}` },
      h('h2', { id: `h-${series.id}` }, h('span', { text: series.label }), h('span', { class: 'figures', text: figures })),
      chart(series, days, width, partial, i === SERIES.length - 1))
  }))
  $('legend').hidden = !partial
  $('table').replaceChildren(
    h('caption', { text: `Daily metrics, ${days.length} days, ${data.timezone}` }),
    h('tr', {}, h('th', { scope: 'col', text: 'Day' }), SERIES.map((s) => h('th', { scope: 'col', text: s.label }))),
    days.map((day, i) => h('tr', {},
      h('th', { scope: 'row', text: `${day.date}${partial && i === days.length - 1 ? ' (today, so far)' : ''}` }),
      SERIES.map((s) => h('td', { text: `${s.value(day)}${s.detail ? s.detail(day) : ''}` })))))
}

function show(result) {
  const { data, error } = readResult(result)
  $('problem').hidden = !error
  $('problem').textContent = error ?? ''
  $('panels').hidden = Boolean(error)
  if (!error) state.data = data
  render()
}

async function switchWindow(period) {
  if (state.loading || state.data?.window === period) return
  state.loading = true
  const label = period === '30d' ? '30 days' : '7 days'
  say($('status'), `Loading ${label}…`)
  render()
  // A window replaces a from/to range (the two are never sent together).
  const { from: _from, to: _to, ...input } = state.input
  const { data, error } = await callTool(view.app, 'get_daily_ops', { ...input, window: period })
  state.loading = false
  if (error) say($('status'), `Could not load ${label}: ${error}`, 'error')
  else {
    state.input = { ...input, window: period }
    state.data = data
    say($('status'), `Showing ${label}.`, 'done')
  }
  render()
  document.querySelector(`[data-window="${period}"]`)?.focus()
}

for (const button of document.querySelectorAll('[data-window]')) button.addEventListener('click', () => switchWindow(button.dataset.window))
let width = 0
window.addEventListener('resize', () => {
  if (window.innerWidth === width) return
  width = window.innerWidth
  render()
})

const view = await connectView('daily-ops', {
  onInput(args) {
    state.input = args
    render()
  },
  onResult: show,
  onCancelled(reason) {
    $('problem').hidden = false
    $('problem').textContent = `The metrics were cancelled${reason ? `: ${reason}` : '.'}`
  },
  onContext(context) {
    state.context = context
    render()
  },
})
