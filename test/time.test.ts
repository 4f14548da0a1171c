// Calendar days (core/time.ts): dates, not instants plus 24 h; the date of an instant in a zone,
// right at each zone's midnight (whatever its offset), and the same answer when asked again.
import t from 'tap'
import { addDays, dayRange, localDate } from '../core/time.ts'

t.test('addDays and dayRange step by calendar days across months, leap days and years', async (t) => {
  t.equal(addDays('2024-02-28', 1), '2024-02-29')
  t.equal(addDays('2024-02-29', 1), '2024-03-01')
  t.equal(addDays('2025-02-28', 1), '2025-03-01')
  t.equal(addDays('2026-12-31', 1), '2027-01-01')
  t.equal(addDays('2027-01-01', -1), '2026-12-31')
  t.equal(addDays('2026-03-08', 0), '2026-03-08')
  t.equal(addDays('2026-01-31', 30), '2026-03-02')
  t.same(dayRange('2026-03-02', 4), ['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02'])
  t.same(dayRange('2026-11-20', 1), ['2026-11-20'])
  t.throws(() => addDays('not a day', 1), RangeError)
})

t.test("localDate: the zone's own date, right before and at its midnight, asked in any order", async (t) => {
  const cases: [string, string, string][] = [
    // zone, instant, local date
    ['UTC', '2026-11-23T23:59:59.999Z', '2026-11-23'],
    ['UTC', '2026-11-24T00:00:00.000Z', '2026-11-24'],
    ['Asia/Kathmandu', '2026-11-23T18:14:59.999Z', '2026-11-23'], // +05:45
    ['Asia/Kathmandu', '2026-11-23T18:15:00.000Z', '2026-11-24'],
    ['America/St_Johns', '2026-11-24T03:29:59.999Z', '2026-11-23'], // -03:30
    ['America/St_Johns', '2026-11-24T03:30:00.000Z', '2026-11-24'],
    // New York, the day daylight saving time starts (midnight is at -05:00) and the day after (-04:00)
    ['America/New_York', '2026-03-08T04:59:59.999Z', '2026-03-07'],
    ['America/New_York', '2026-03-08T05:00:00.000Z', '2026-03-08'],
    ['America/New_York', '2026-03-09T03:59:59.999Z', '2026-03-08'],
    ['America/New_York', '2026-03-09T04:00:00.000Z', '2026-03-09'],
    ['Pacific/Chatham', '2026-11-23T10:14:59.999Z', '2026-11-23'], // +13:45 in southern summer
    ['Pacific/Chatham', '2026-11-23T10:15:00.000Z', '2026-11-24'],
  ]
  for (const round of [1, 2]) {
    for (const [zone, instant, date] of round === 1 ? cases : [...cases].reverse()) {
      t.equal(localDate(new Date(instant), zone), date, `${zone} ${instant} (round ${round})`)
      t.equal(localDate(new Date(instant), zone), date, `${zone} ${instant} again`)
    }
  }
})
