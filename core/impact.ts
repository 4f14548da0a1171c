// What a metric did after a decision (get_opportunity_impact): the days after it against the days
// before it — both means, the change, and how unusual the after-mean is against the spread of the
// before-days (docs/design.md, "Impact of a decision").

/** |z| from here up: the after-mean is past one typical day-to-day swing of the before-days. */
export const UNUSUAL_Z = 1
/** |z| from here up: past two of them. */
export const VERY_UNUSUAL_Z = 2

export type Unusualness = 'usual' | 'unusual' | 'very_unusual'

export interface Comparison {
  before_mean: number | null
  after_mean: number | null
  /** after − before, per day. */
  change: number | null
  /** (after − before) / before; null when before is 0. */
  relative_change: number | null
  /** The before-days' sample standard deviation. */
  before_sd: number | null
  /** What z divides by: the before-days' standard deviation, never below √(before mean) nor 1. */
  spread: number | null
  z: number | null
  unusualness: Unusualness | null
  /** The before-days' least-squares slope, per day: a trend already under way. */
  before_trend: number | null
  /** The change that trend alone gives if it went on: its slope × the days between the periods' middles. */
  trend_change: number | null
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length

/** The sample standard deviation (n − 1); 0 for fewer than two values. */
export function sampleSd(xs: readonly number[]): number {
  if (xs.length < 2) return 0
  const m = mean(xs)
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1))
}

/**
 * The spread a change is measured against. A before-period flatter than counting noise (the same
 * 5 users every day, or none) would make any change look infinitely unusual: daily counts of
 * people vary by about √mean by chance alone, so the spread is never below that, nor below one
 * a day (a series of zeros has √0 = 0).
 */
export function spreadOf(before: readonly number[]): number {
  return Math.max(sampleSd(before), Math.sqrt(mean(before)), 1)
}

export function unusualnessOf(z: number): Unusualness {
  const a = Math.abs(z)
  return a >= VERY_UNUSUAL_Z ? 'very_unusual' : a >= UNUSUAL_Z ? 'unusual' : 'usual'
}

/** The least-squares slope of values at positions 0, 1, 2…; null for fewer than two. */
export function slopeOf(ys: readonly number[]): number | null {
  if (ys.length < 2) return null
  const mx = (ys.length - 1) / 2
  const my = mean(ys)
  let num = 0
  let den = 0
  ys.forEach((y, x) => {
    num += (x - mx) * (y - my)
    den += (x - mx) ** 2
  })
  return num / den
}

const round = (n: number, places: number) => {
  const f = 10 ** places
  return Math.round(n * f) / f
}

/**
 * The after-days against the before-days: z = (after mean − before mean) / spread, how many of
 * the before-period's typical day-to-day swings the average day after lies from the average day
 * before. Every field null that needs a period with no day in it. Rounded for reading (2 places;
 * the relative change 4), computed unrounded. `afterOffset`: the first after-day's position, counted
 * from the first before-day (N + 1 with the decision day between).
 */
export function compareDays(before: readonly number[], after: readonly number[], afterOffset = before.length): Comparison {
  const b = before.length > 0 ? mean(before) : null
  const a = after.length > 0 ? mean(after) : null
  const sd = before.length > 0 ? sampleSd(before) : null
  const spread = before.length > 0 ? spreadOf(before) : null
  const z = a !== null && b !== null && spread !== null ? (a - b) / spread : null
  const slope = slopeOf(before)
  // Before-days at positions 0…, after-days from `afterOffset` on (the decision day between them).
  const trend = slope === null || after.length === 0 ? null : slope * (afterOffset + (after.length - 1) / 2 - (before.length - 1) / 2)
  return {
    before_mean: b === null ? null : round(b, 2),
    after_mean: a === null ? null : round(a, 2),
    change: a === null || b === null ? null : round(a - b, 2),
    relative_change: a === null || b === null || b === 0 ? null : round((a - b) / b, 4),
    before_sd: sd === null ? null : round(sd, 2),
    spread: spread === null ? null : round(spread, 2),
    z: z === null ? null : round(z, 2),
    // From the z shown, so that a reader who checks it against the thresholds agrees.
    unusualness: z === null ? null : unusualnessOf(round(z, 2)),
    before_trend: slope === null ? null : round(slope, 2),
    trend_change: trend === null ? null : round(trend, 2),
  }
}
