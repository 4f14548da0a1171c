// A small server-rendered SVG line chart: numbers in, markup out (no user text inside).
export interface Series {
  className: string
  label: string
  values: number[]
}

export function lineChart(labels: string[], series: Series[], width = 900, height = 260): string {
  const pad = { left: 44, right: 24, top: 12, bottom: 28 } // right: room for half of the last date label
  const w = width - pad.left - pad.right
  const h = height - pad.top - pad.bottom
  const max = Math.max(1, ...series.flatMap((s) => s.values))
  const step = labels.length > 1 ? w / (labels.length - 1) : 0
  const x = (i: number) => pad.left + i * step
  const y = (v: number) => pad.top + h - (v / max) * h
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(max * f))
  const grid = ticks
    .map((t) => `<line x1="${pad.left}" x2="${pad.left + w}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#e5e8ee"/><text x="${pad.left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#5b6474">${t}</text>`)
    .join('')
  const every = Math.max(1, Math.ceil(labels.length / 10))
  const xLabels = labels
    .map((l, i) => (i % every === 0 || i === labels.length - 1 ? `<text x="${x(i).toFixed(1)}" y="${height - 8}" text-anchor="middle" font-size="11" fill="#5b6474">${escapeXml(l.slice(5))}</text>` : ''))
    .join('')
  const lines = series
    .map((s) => {
      const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')
      const dots = s.values.map((v, i) => `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="2.5" class="${s.className}" fill="currentColor"><title>${escapeXml(labels[i] ?? '')}: ${v}</title></circle>`).join('')
      return `<g><title>${escapeXml(s.label)}</title><polyline class="${s.className}" fill="none" stroke-width="2" points="${points}"/>${dots}</g>`
    })
    .join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" role="img" aria-label="Daily metrics chart">${grid}${xLabels}${lines}</svg>`
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
