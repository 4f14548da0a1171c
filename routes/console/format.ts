// Numbers and times for people: relative times with the exact UTC time on hover (console.js
// restates it in the viewer's own zone), and changes as ▲/▼ percentages.

/** "just now", "12 min ago", "3 h ago", "2 days ago", else the UTC date; "in 5 min" for the future. */
export function relativeTime(iso: string, now: Date): string {
  const then = new Date(iso)
  const seconds = (now.getTime() - then.getTime()) / 1000
  const ago = (n: number, unit: string) => (seconds >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`)
  const s = Math.abs(seconds)
  if (s < 45) return 'just now'
  if (s < 59.5 * 60) return ago(Math.max(1, Math.round(s / 60)), 'min')
  if (s < 36 * 3600) return ago(Math.round(s / 3600), 'h')
  if (s < 14 * 86400) return ago(Math.round(s / 86400), 'days')
  return then.toISOString().slice(0, 10)
}

/** The exact time, in UTC: "2026-11-20 12:00:00 UTC". */
export function exactUtc(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

const escapeHtml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Text escaped, with a line-break opportunity after each `_` (`potential_<wbr>user_<wbr>…`), for names in narrow columns. */
export function breakable(text: string): string {
  return escapeHtml(text).replace(/_/g, '_<wbr>')
}

/**
 * `<time datetime="ISO" title="exact UTC">relative</time>`, or `empty` (escaped) for no time.
 * Anything that is not a time is shown as given, escaped.
 */
export function timeTag(iso: string | Date | null | undefined, now: Date, empty = '—'): string {
  if (iso === null || iso === undefined || iso === '') return escapeHtml(empty)
  const text = iso instanceof Date ? iso.toISOString() : iso
  if (Number.isNaN(new Date(text).getTime())) return escapeHtml(text)
  const normal = new Date(text).toISOString()
  return `<time datetime="${normal}" title="${exactUtc(normal)}">${escapeHtml(relativeTime(normal, now))}</time>`
}

/** A change ratio (0.25 = +25 %) as a class and text: ▲ 25 %, ▼ 10 %, — when there is nothing to compare. */
export function changeBadge(change: number | null): { className: string; text: string; label: string } {
  if (change === null) return { className: 'neutral', text: '—', label: 'no previous data to compare' }
  const pct = Math.round(change * 1000) / 10
  if (pct === 0) return { className: 'neutral', text: '± 0 %', label: 'unchanged' }
  return pct > 0
    ? { className: 'up', text: `▲ ${pct} %`, label: `up ${pct} %` }
    : { className: 'down', text: `▼ ${Math.abs(pct)} %`, label: `down ${Math.abs(pct)} %` }
}

/** A member's initials from their email, for a small avatar: `ana.lopez@…` → `AL`, `dana@…` → `DA`. */
export function initials(email: string): string {
  const local = email.split('@')[0] ?? ''
  const parts = local.split(/[._+-]+/).filter((p) => /[\p{L}\p{N}]/u.test(p))
  const letters = parts.length >= 2 ? [...parts[0]!][0]! + [...parts[1]!][0]! : [...(parts[0] ?? local)].filter((c) => /[\p{L}\p{N}]/u.test(c)).slice(0, 2).join('')
  return (letters || '?').toUpperCase()
}
