// What create_project and update_project check alike: the time zone before the write, a
// taken slug after it.
import { appError } from '../core/errors.ts'
import { isTimeZone } from '../core/time.ts'
import type { ProjectCard } from '../schemas/projects.ts'
import type { CardWrite } from '../db/repositories/projects.ts'

export function checkTimeZone(timezone: string | undefined): void {
  if (timezone !== undefined && !isTimeZone(timezone)) {
    throw appError('InvalidArguments', `'${timezone}' is not an IANA time zone.`, [{ path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' }])
  }
}

/**
 * The card a write returned; a slug the unique (workspace, slug) index refused answers 409, and so
 * does a new time zone once EVENTS_RETENTION_DAYS has dropped raw events the rebuild would need.
 */
export function writtenCard(slug: string | undefined, result: CardWrite): ProjectCard {
  if (result.ok) return result.project
  if (result.reason === 'raw_events_dropped') {
    throw appError(
      'Conflict',
      `The time zone cannot change: a new zone recomputes every day's numbers from the raw events, and raw events before ${result.since ?? 'today'} were dropped by EVENTS_RETENTION_DAYS. Nothing was changed.`,
      [{ path: 'timezone', message: 'cannot change once raw events have been dropped by retention' }]
    )
  }
  throw appError('Conflict', `The slug '${slug}' is taken in this workspace.`, [{ path: 'slug', message: 'is taken' }])
}
