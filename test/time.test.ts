// Calendar days (core/time.ts): dates, not instants plus 24 h; the date of an instant in a zone,
// right at each zone's midnight (whatever its offset), and the same answer when asked again.
import t from 'tap'
import { addDays, dayRange, localDate, startOfDay } from '../core/time.ts'

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

t.test('startOfDay: the first instant of a day in its zone, where midnight is skipped too', async (t) => {
  t.equal(startOfDay('2026-03-10', 'UTC').toISOString(), '2026-03-10T00:00:00.000Z')
  t.equal(startOfDay('2026-03-10', 'Asia/Tokyo').toISOString(), '2026-03-09T15:00:00.000Z', '+09:00')
  t.equal(startOfDay('2026-03-10', 'Pacific/Kiritimati').toISOString(), '2026-03-09T10:00:00.000Z', '+14:00, the earliest zone')
  t.equal(startOfDay('2026-03-10', 'Pacific/Pago_Pago').toISOString(), '2026-03-10T11:00:00.000Z', '-11:00')
  t.equal(startOfDay('2026-03-08', 'America/New_York').toISOString(), '2026-03-08T05:00:00.000Z', 'the day its clocks go forward (at 02:00) starts at -05:00')
  t.equal(startOfDay('2026-03-09', 'America/New_York').toISOString(), '2026-03-09T04:00:00.000Z', 'the next at -04:00')
  t.equal(startOfDay('2018-11-04', 'America/Sao_Paulo').toISOString(), '2018-11-04T03:00:00.000Z', 'midnight skipped (00:00 → 01:00): the day starts at 01:00 local')
  t.equal(startOfDay('2026-03-29', 'Asia/Kolkata').toISOString(), '2026-03-28T18:30:00.000Z', 'a half-hour offset')
  for (const zone of ['UTC', 'Asia/Tokyo', 'America/Los_Angeles', 'Pacific/Kiritimati', 'Asia/Kathmandu']) {
    const start = startOfDay('2026-07-01', zone)
    t.equal(localDate(start, zone), '2026-07-01', `${zone}: its start is in the day`)
    t.equal(localDate(new Date(start.getTime() - 60_000), zone), '2026-06-30', `${zone}: a minute before is the day before`)
  }
})
