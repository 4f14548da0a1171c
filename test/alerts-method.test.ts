// Alerts judged without a database (core/alerts.ts): the anomaly method on made-up series with
// known spikes and drops, series that must not fire (flat, zero, small and noisy), and the
// thresholds on today so far and on the closed day.
import t from 'tap'
import {
  ANOMALY_MIN_WEEKS, alertConditions, alertMetrics, anomalyBand, definitionProblems, judgeDaily, judgeNow, sameWeekdays,
  type AlertDefinition,
} from '../core/alerts.ts'
import { alertConditions as storedConditions, alertMetrics as storedMetrics } from '../db/schema.ts'
import { addDays } from '../core/time.ts'

const TODAY = '2026-03-18' // a Wednesday

/** A daily series: `weeks` past same weekdays of `today` (newest first) and of the day before, plus today and yesterday. */
function numbers(input: { today: number; yesterday?: number; todayHistory?: number[]; yesterdayHistory?: number[]; firstDay?: string | null }) {
  const values = new Map<string, number>()
  values.set(TODAY, input.today)
  values.set(addDays(TODAY, -1), input.yesterday ?? 0)
  input.todayHistory?.forEach((v, i) => values.set(addDays(TODAY, -7 * (i + 1)), v))
  input.yesterdayHistory?.forEach((v, i) => values.set(addDays(TODAY, -1 - 7 * (i + 1)), v))
  const weeks = Math.max(input.todayHistory?.length ?? 0, input.yesterdayHistory?.length ?? 0)
  const firstDay = input.firstDay !== undefined ? input.firstDay : addDays(TODAY, -7 * weeks - 1)
  return { today: TODAY, firstDay, valueOf: (day: string) => values.get(day) ?? 0 }
}

const anomaly: AlertDefinition = { metric: 'daily_users', condition: 'anomaly', threshold: null }

t.test('the metrics and conditions are the ones the table keeps', async (t) => {
  t.same([...alertMetrics], [...storedMetrics])
  t.same([...alertConditions], [...storedConditions])
})

t.test('anomalyBand: median and MAD, a Poisson floor, and a minimum history', async (t) => {
  t.equal(anomalyBand([10, 12, 11]), null, `fewer than ${ANOMALY_MIN_WEEKS} weeks: no judgement`)
  const flat = anomalyBand([10, 10, 10, 10, 10, 10, 10, 10])!
  t.equal(flat.median, 10)
  t.equal(flat.mad, 0)
  t.equal(flat.scale, 3.16, 'MAD 0: the scale is √median, not 0')
  t.ok(flat.low < 10 && flat.high > 10 && flat.high < 20)
  const zero = anomalyBand([0, 0, 0, 0, 0, 0])!
  t.equal(zero.scale, 1, 'a zero series: the scale is still 1')
  t.same([zero.low, zero.high], [0, 3])
  const oneSpike = anomalyBand([100, 104, 97, 400, 101, 99, 102, 98])!
  t.equal(oneSpike.median, 100.5, 'one past spike does not move the median')
  t.ok(oneSpike.high < 140, `nor widen the range much (${oneSpike.high})`)
})

t.test('sameWeekdays: 7, 14 … days before, none before the first day of data, at most 8', async (t) => {
  const valueOf = (day: string) => Number(day.slice(8, 10))
  t.same(sameWeekdays(TODAY, addDays(TODAY, -15), valueOf), [11, 4])
  t.same(sameWeekdays(TODAY, null, valueOf), [])
  t.equal(sameWeekdays(TODAY, '2020-01-01', valueOf).length, 8)
})

t.test('anomaly: a spike fires as it happens (today so far), a drop once the day has closed', async (t) => {
  const steady = [40, 44, 38, 42, 41, 39, 43, 40]
  const spike = judgeDaily(anomaly, numbers({ today: 95, yesterday: 41, todayHistory: steady, yesterdayHistory: steady }))
  t.equal(spike.firing, true)
  t.equal(spike.day, TODAY)
  t.equal(spike.value, 95)
  t.match(spike.detail, { method: 'median_mad_same_weekdays', direction: 'spike', expected: 40.5, weeks: 8 })

  const drop = judgeDaily(anomaly, numbers({ today: 3, yesterday: 9, todayHistory: steady, yesterdayHistory: steady }))
  t.equal(drop.firing, true, 'yesterday (9 against about 40) closed far below its range')
  t.equal(drop.day, addDays(TODAY, -1))
  t.equal(drop.value, 9)
  t.match(drop.detail, { direction: 'drop', basis: 'closed_day' })

  const recovered = judgeDaily(anomaly, numbers({ today: 35, yesterday: 9, todayHistory: steady, yesterdayHistory: steady }))
  t.equal(recovered.firing, false, 'today so far already within its range: the drop is over')

  const partial = judgeDaily(anomaly, numbers({ today: 2, yesterday: 41, todayHistory: steady, yesterdayHistory: steady }))
  t.equal(partial.firing, false, 'a low partial day is not a drop')
})

t.test('anomaly on small counts: the Poisson floor keeps ordinary wobbles quiet, a real jump still fires', async (t) => {
  const small = [2, 0, 3, 1, 2, 4, 1, 2]
  for (const today of [0, 1, 2, 3, 4, 5, 6]) {
    t.equal(judgeDaily(anomaly, numbers({ today, yesterday: 2, todayHistory: small, yesterdayHistory: small })).firing, false, `today ${today} against a median of 2`)
  }
  t.equal(judgeDaily(anomaly, numbers({ today: 12, yesterday: 2, todayHistory: small, yesterdayHistory: small })).firing, true, '12 against a median of 2')
  t.equal(judgeDaily(anomaly, numbers({ today: 0, yesterday: 0, todayHistory: small, yesterdayHistory: small })).firing, false, 'a zero day is no drop from a median of 2')
})

t.test('flat and zero series never fire', async (t) => {
  const flat = [20, 20, 20, 20, 20, 20, 20, 20]
  for (const [today, yesterday] of [[20, 20], [0, 20], [25, 20], [20, 17]]) {
    t.equal(judgeDaily(anomaly, numbers({ today: today!, yesterday: yesterday!, todayHistory: flat, yesterdayHistory: flat })).firing, false, `flat 20: today ${today}, yesterday ${yesterday}`)
  }
  const zeros = [0, 0, 0, 0, 0, 0, 0, 0]
  t.equal(judgeDaily(anomaly, numbers({ today: 0, yesterday: 0, todayHistory: zeros, yesterdayHistory: zeros })).firing, false, 'all zero')
  t.equal(judgeDaily(anomaly, numbers({ today: 2, yesterday: 0, todayHistory: zeros, yesterdayHistory: zeros })).firing, false, 'zero history, 2 today')
  t.equal(judgeDaily(anomaly, numbers({ today: 9, yesterday: 0, todayHistory: zeros, yesterdayHistory: zeros })).firing, true, 'zero history, 9 today')
})

t.test('anomaly needs the minimum history: a new project is never anomalous', async (t) => {
  const result = judgeDaily(anomaly, numbers({ today: 500, yesterday: 0, todayHistory: [1, 1, 1], yesterdayHistory: [1, 1, 1] }))
  t.equal(result.firing, false)
  t.match(result.detail, { weeks: 0, expected: null })
  t.equal(judgeDaily(anomaly, numbers({ today: 500, firstDay: null })).firing, false, 'no data at all')
})

t.test('above: today so far, from the moment it crosses', async (t) => {
  const above: AlertDefinition = { metric: 'registrations', condition: 'above', threshold: 10 }
  t.equal(judgeDaily(above, numbers({ today: 10, yesterday: 50 })).firing, false, '10 is not above 10; yesterday does not count')
  const crossed = judgeDaily(above, numbers({ today: 11 }))
  t.same(crossed, { firing: true, day: TODAY, value: 11, detail: { threshold: 10, basis: 'today_so_far' } })
})

t.test('below: the closed day, and today only once it reaches the threshold', async (t) => {
  const below: AlertDefinition = { metric: 'daily_users', condition: 'below', threshold: 5 }
  t.same(judgeDaily(below, numbers({ today: 0, yesterday: 8 })), { firing: false, day: addDays(TODAY, -1), value: 8, detail: { threshold: 5, basis: 'closed_day' } }, 'a quiet morning after a good day: no alert')
  t.same(judgeDaily(below, numbers({ today: 2, yesterday: 3 })), { firing: true, day: addDays(TODAY, -1), value: 3, detail: { threshold: 5, basis: 'closed_day' } }, 'yesterday closed below')
  t.same(judgeDaily(below, numbers({ today: 5, yesterday: 3 })), { firing: false, day: TODAY, value: 5, detail: { threshold: 5, basis: 'today_so_far' } }, 'today reached it: recovered')
  t.equal(judgeDaily(below, numbers({ today: 0, yesterday: 0, firstDay: TODAY })).firing, false, 'the event was first recorded today: yesterday is not a day below')
  t.equal(judgeDaily(below, numbers({ today: 0, yesterday: 0, firstDay: null })).firing, false, 'never recorded: nothing to judge')
  t.equal(judgeDaily(below, numbers({ today: 0, yesterday: 0, firstDay: addDays(TODAY, -2) })).firing, true, 'recorded since the day before, and yesterday had none')
})

t.test('the review queue: above and below its value now', async (t) => {
  t.same(judgeNow({ metric: 'pending_opportunities', condition: 'above', threshold: 3 }, TODAY, 4), { firing: true, day: TODAY, value: 4, detail: { threshold: 3, basis: 'now' } })
  t.equal(judgeNow({ metric: 'pending_opportunities', condition: 'above', threshold: 3 }, TODAY, 3).firing, false)
  t.equal(judgeNow({ metric: 'oldest_pending_age_hours', condition: 'below', threshold: 1 }, TODAY, 0.5).firing, true)
})

t.test('definitionProblems: event with the event metrics only, threshold with above/below only, anomaly on daily metrics only', async (t) => {
  t.same(definitionProblems({ metric: 'event_count', event: 'export', condition: 'above', threshold: 3 }), [])
  t.same(definitionProblems({ metric: 'daily_users', event: null, condition: 'anomaly', threshold: null }), [])
  t.same(definitionProblems({ metric: 'event_users', event: null, condition: 'above', threshold: 3 }).map((p) => p.path), ['event'])
  t.same(definitionProblems({ metric: 'registrations', event: 'signup', condition: 'above', threshold: 3 }).map((p) => p.path), ['event'])
  t.same(definitionProblems({ metric: 'registrations', event: null, condition: 'below', threshold: null }).map((p) => p.path), ['threshold'])
  t.same(definitionProblems({ metric: 'registrations', event: null, condition: 'anomaly', threshold: 4 }).map((p) => p.path), ['threshold'])
  t.same(definitionProblems({ metric: 'pending_opportunities', event: null, condition: 'anomaly', threshold: null }).map((p) => p.path), ['condition'])
})
