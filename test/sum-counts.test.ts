// sumCounts (db/repositories/events.ts): the counter rows of a read, as the statement sends them
// (day as an offset from the range's first day, one row per shard), summed per (day, event) and
// dated as PostgreSQL's date::text writes the days.
import t from 'tap'
import { sumCounts } from '../db/repositories/events.ts'

t.test('rows of one (day, event) are summed; days are dated from the first day of the range', async (t) => {
  // A range over a month, a year and a leap day's boundaries; int8 counts come as text from
  // postgres.js and as numbers or bigints from PGlite.
  const rows: unknown[][] = [
    [0, 'signup', '3', '2'],
    [1, 'signup', 5, 4],
    [0, 'signup', 7n, 1n],
    [0, 'daily_use', '10', '6'],
    [0, 'signup', '-1', '0'],
    [31, 'signup', '1', '1'],
    [1, 'daily_use', '2', '2'],
  ]
  t.same(sumCounts('2027-12-31', rows), [
    { day: '2027-12-31', event: 'signup', events: 9, uniqueUsers: 3 },
    { day: '2028-01-01', event: 'signup', events: 5, uniqueUsers: 4 },
    { day: '2027-12-31', event: 'daily_use', events: 10, uniqueUsers: 6 },
    { day: '2028-01-31', event: 'signup', events: 1, uniqueUsers: 1 },
    { day: '2028-01-01', event: 'daily_use', events: 2, uniqueUsers: 2 },
  ])
  t.same(sumCounts('2028-02-28', [[1, 'e', '1', '1'], [2, 'e', '1', '1']]).map((c) => c.day), ['2028-02-29', '2028-03-01'])
  // An event name with the key's separator in it stays apart from the others.
  t.same(sumCounts('2026-01-01', [[0, 'a\u0000b', '1', '1'], [0, 'a', '2', '2']]).length, 2)
  t.same(sumCounts('2026-01-01', []), [])
})

t.test('a read longer than the keys can tell apart is refused, not summed into another (day, event)', async (t) => {
  t.throws(() => sumCounts('2026-01-01', [[100_000, 'signup', 1, 1]]), RangeError)
  t.same(sumCounts('2026-01-01', [[99_999, 'signup', 1, 1], [0, 'daily_use', 2, 2]]).map((c) => c.events), [1, 2])
})
