import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { invalidArguments } from '../core/errors.ts'
import { latestSlot, slotPeriod, toSchedule, weekdayNumber } from '../core/digests.ts'
import { DigestSchedule, DigestScheduleInput } from '../schemas/digests.ts'

const refuse = (message: string) => invalidArguments([{ path: 'weekday', message }])

export default defineOperation({
  name: 'set_digest',
  title: 'Schedule the digest',
  description:
    'Metrics digest of the project: set its schedule, daily (the day that just closed) or weekly (the 7 days ending ' +
    'yesterday, on `weekday`), at `hour` in the project time zone; sent as a digest.ready webhook message and mailed to ' +
    'the owners. The first goes at the next such hour, never at once. Owner only. Returns the schedule.',
  scope: 'project',
  role: 'owner',
  toolset: 'metrics',
  input: Type.Object({
    frequency: DigestScheduleInput.frequency,
    hour: DigestScheduleInput.hour,
    weekday: Type.Optional(DigestScheduleInput.weekday),
    enabled: Type.Optional(DigestScheduleInput.enabled),
  }, { additionalProperties: false }),
  output: Type.Object({ ...DigestSchedule.properties, created: Type.Boolean({ description: 'true when the project had no schedule before.' }) }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Every morning at 9', args: { frequency: 'daily', hour: 9 } },
      { title: 'Mondays at 8', args: { frequency: 'weekly', hour: 8, weekday: 'Monday' } },
      { title: 'Fridays at 17, paused for now', args: { frequency: 'weekly', hour: 17, weekday: 5, enabled: false } },
    ],
    invalid: [
      { title: 'An hour past 23', args: { frequency: 'daily', hour: 24 }, field: 'hour' },
      { title: 'Monthly is not a frequency', args: { frequency: 'monthly', hour: 9 }, field: 'frequency' },
      { title: 'Weekly without its day', args: { frequency: 'weekly', hour: 9 }, field: 'weekday' },
      { title: 'A weekday for a daily digest', args: { frequency: 'daily', hour: 9, weekday: 1 }, field: 'weekday' },
      { title: 'A day that is not one', args: { frequency: 'weekly', hour: 9, weekday: 'funday' }, field: 'weekday' },
      { title: 'Day 8 of the week', args: { frequency: 'weekly', hour: 9, weekday: 8 }, field: 'weekday' },
      { title: 'No hour', args: { frequency: 'daily' }, field: 'hour' },
    ],
  },
  async handler(args, ctx) {
    if (args.frequency === 'daily' && args.weekday !== undefined) throw refuse('must not be sent for a daily digest')
    if (args.frequency === 'weekly' && args.weekday === undefined) throw refuse('is required for a weekly digest: 1 = Monday … 7 = Sunday, or the day\'s name')
    const weekday = args.weekday === undefined ? null : weekdayNumber(args.weekday)
    if (args.frequency === 'weekly' && weekday === null) throw refuse('must be 1 = Monday … 7 = Sunday, or the day\'s name in English (monday … sunday)')
    const schedule = { frequency: args.frequency, hour: args.hour, weekday }
    const now = ctx.now()
    const { timezone } = ctx.project
    // The period of the slot that has come already counts as sent: the first digest goes at the next slot.
    const sentThrough = slotPeriod(args.frequency, latestSlot(schedule, now, timezone)).to
    const { row, created } = await ctx.repos.digests.set({ projectId: ctx.project.id, ...schedule, enabled: args.enabled, sentThrough, createdBy: ctx.principal.userId, now })
    return { ...toSchedule(row, timezone, now), created }
  },
})
