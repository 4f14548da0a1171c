// People's numbers: round chart ticks (1/2/5 × 10^n from 0), relative times with the exact UTC
// time on hover, and changes as ▲/▼ percentages.
import t from 'tap'
import { lineChart, niceTicks, sparkline } from '../../routes/console/chart.ts'
import { breakable, changeBadge, relativeTime, timeTag } from '../../routes/console/format.ts'

t.test('niceTicks: round steps from 0 up to at least the maximum', async (t) => {
  t.same(niceTicks(116), [0, 50, 100, 150], 'never 0/39/77/116')
  t.same(niceTicks(100), [0, 50, 100])
  t.same(niceTicks(0), [0, 1], 'an empty chart still has an axis')
  t.same(niceTicks(1), [0, 1])
  t.same(niceTicks(2), [0, 1, 2], 'counts step by at least 1')
  t.same(niceTicks(7), [0, 2, 4, 6, 8])
  t.same(niceTicks(10), [0, 5, 10])
  t.same(niceTicks(39), [0, 10, 20, 30, 40])
  t.same(niceTicks(1234), [0, 500, 1000, 1500])
  t.same(niceTicks(3.5), [0, 1, 2, 3, 4])
  for (let max = 0; max <= 5000; max += 7) {
    const ticks = niceTicks(max)
    const step = ticks[1]! - ticks[0]!
    const m = step / 10 ** Math.floor(Math.log10(step))
    if (![1, 2, 5].includes(m)) t.fail(`max ${max}: step ${step} is not 1, 2 or 5 × 10^n`)
    if (ticks[0] !== 0 || ticks.at(-1)! < max || (ticks.at(-2)! >= max && max > 0)) t.fail(`max ${max}: ${ticks.join('/')} does not just cover it`)
    if (ticks.length < 2 || ticks.length > 6) t.fail(`max ${max}: ${ticks.length} ticks`)
    if (ticks.some((v, i) => i > 0 && v - ticks[i - 1]! !== step)) t.fail(`max ${max}: uneven ticks ${ticks.join('/')}`)
  }
})

t.test('lineChart labels its y axis with the round ticks', async (t) => {
  const svg = lineChart(['2026-11-19', '2026-11-20'], [{ className: 's1', label: 'x', values: [116, 3] }])
  const labels = [...svg.matchAll(/text-anchor="end"[^>]*>(\d+)</g)].map((m) => Number(m[1]))
  t.same(labels, [0, 50, 100, 150])
  t.match(sparkline(['a', 'b', 'c'], [1, 5, 2]), /<polyline[^>]+points="[^"]+ [^"]+ [^"]+"/, 'a sparkline has a point per day')
})

t.test('lineChart: a comparison series lighter and dashed under the others, and a partial last day', async (t) => {
  const labels = ['2026-11-18', '2026-11-19', '2026-11-20']
  const svg = lineChart(labels, [
    { className: 's1', label: 'before', values: [4, 5, 6], previous: { labels: ['2026-11-15', '2026-11-16', '2026-11-17'] } },
    { className: 's1', label: 'now', values: [3, 2, 1] },
  ], { partialLast: true })
  t.ok(svg.indexOf('class="s1 previous"') < svg.indexOf('class="s1"'), 'the comparison is drawn first, under the period')
  t.match(svg, /<polyline class="s1 previous"[^>]*stroke-dasharray/, 'dashed')
  t.match(svg, /<title>2026-11-16: 5<\/title>/, 'its points titled with its own dates')
  t.equal([...svg.matchAll(/<polyline class="s1" [^>]*points="([^"]+)"/g)].map((m) => m[1]!.split(' ').length)[0], 2, 'the line stops at the last whole day')
  t.match(svg, /<line class="s1 partial"[^>]*stroke-dasharray/, 'a dashed segment reaches today')
  t.match(svg, /<circle [^>]*class="s1 partial" fill="#fff"[^>]*><title>2026-11-20: 1 \(today so far\)<\/title>/, "today's point is hollow and says so")
  t.match(svg, />today so far<\/text>/, 'a label over the day')
  const labelsOf = (markup: string) => [...markup.matchAll(/text-anchor="end"[^>]*>(\d+)</g)].map((m) => Number(m[1]))
  t.same(labelsOf(svg), [0, 2, 4, 6], 'the scale holds both periods')
  const whole = lineChart(labels, [{ className: 's1', label: 'now', values: [3, 2, 1] }])
  t.notMatch(whole, /partial|today so far/, 'without partialLast: nothing marked')
  t.equal([...whole.matchAll(/<polyline class="s1" [^>]*points="([^"]+)"/g)][0]![1]!.split(' ').length, 3)
})

t.test('relative times and the exact time on hover', async (t) => {
  const now = new Date('2026-11-20T12:00:00Z')
  t.equal(relativeTime('2026-11-20T11:59:40Z', now), 'just now')
  t.equal(relativeTime('2026-11-20T11:48:00Z', now), '12 min ago')
  t.equal(relativeTime('2026-11-20T09:00:00Z', now), '3 h ago')
  t.equal(relativeTime('2026-11-18T12:00:00Z', now), '2 days ago')
  t.equal(relativeTime('2026-10-01T12:00:00Z', now), '2026-10-01', 'older: the date')
  t.equal(relativeTime('2026-11-20T12:05:00Z', now), 'in 5 min')
  t.equal(timeTag('2026-11-20T09:00:00.000Z', now), '<time datetime="2026-11-20T09:00:00.000Z" title="2026-11-20 09:00:00 UTC">3 h ago</time>')
  t.equal(timeTag(null, now, 'never'), 'never')
  t.equal(timeTag('<b>', now), '&#60;b&#62;', 'not a time: shown as text, escaped')
})

t.test('changes as ▲/▼ percentages, neutral without a previous period', async (t) => {
  t.same(changeBadge(2), { className: 'up', text: '▲ 200 %', label: 'up 200 %' })
  t.same(changeBadge(-0.125), { className: 'down', text: '▼ 12.5 %', label: 'down 12.5 %' })
  t.equal(changeBadge(null).className, 'neutral')
  t.equal(changeBadge(0).text, '± 0 %')
})

t.test('breakable: escaped, and may wrap after an underscore', async (t) => {
  t.equal(breakable('potential_user_opportunity'), 'potential_<wbr>user_<wbr>opportunity')
  t.equal(breakable('<b>_&'), '&#60;b&#62;_<wbr>&#38;', 'the text is escaped before the breaks go in')
})
