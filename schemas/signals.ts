import type { Static } from '@sinclair/typebox'
import { StringEnum } from './atoms.ts'

/** What search_signals searches: the opportunities and the memories of a project. */
export const SignalKind = StringEnum(['opportunity', 'memory'] as const)
export type SignalKind = Static<typeof SignalKind>
