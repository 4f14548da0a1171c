// The background loop the timer plugins share (retention folds, counter folds, event partitions,
// digests): a run every interval once the app is ready, never two at once (the next is scheduled
// when one ends), a failure logged and the loop going on, and the app's close waiting for a run
// under way — hooks run in reverse order of registration, so before the database closes.
import type { FastifyInstance } from 'fastify'

export interface Periodic {
  /** What the log says failed (`'digest scheduler'`). */
  what: string
  intervalMs: number
  /** The first run, after the app is ready (default: one interval). */
  firstAfterMs?: number
  work(): Promise<unknown>
}

export function runPeriodically(app: FastifyInstance, { what, intervalMs, firstAfterMs = intervalMs, work }: Periodic): void {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> | undefined
  let stopped = false
  const tick = () => {
    running = work()
      .catch((err: unknown) => app.log.error({ err }, what))
      .finally(() => {
        running = undefined
        if (!stopped) timer = setTimeout(tick, intervalMs).unref()
      })
  }
  app.addHook('onReady', async () => {
    timer = setTimeout(tick, firstAfterMs).unref()
  })
  app.addHook('onClose', async () => {
    stopped = true
    clearTimeout(timer)
    await running
  })
}
