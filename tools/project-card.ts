// What create_project and update_project check alike: the time zone before the write, a
// taken slug after it.
import { appError } from '../core/errors.ts'
import { isTimeZone } from '../core/time.ts'
import type { ProjectCard } from '../schemas/projects.ts'

export function checkTimeZone(timezone: string | undefined): void {
  if (timezone !== undefined && !isTimeZone(timezone)) {
    throw appError('InvalidArguments', `'${timezone}' is not an IANA time zone.`, [{ path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' }])
  }
}

/** The card a write returned; a slug the unique (workspace, slug) index refused answers 409. */
export function writtenCard(slug: string | undefined, result: { ok: true; project: ProjectCard } | { ok: false; reason: 'slug_taken' }): ProjectCard {
  if (!result.ok) throw appError('Conflict', `The slug '${slug}' is taken in this workspace.`, [{ path: 'slug', message: 'is taken' }])
  return result.project
}
