// What create_project and update_project check alike: the time zone before the write, a
// taken slug after it.
import { appError } from '../core/errors.ts'
import { isTimeZone } from '../core/time.ts'
import { isUniqueViolation } from '../db/client.ts'

export function checkTimeZone(timezone: string | undefined): void {
  if (timezone !== undefined && !isTimeZone(timezone)) {
    throw appError('InvalidArguments', `'${timezone}' is not an IANA time zone.`, [{ path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' }])
  }
}

/** Runs a card write; the unique (workspace, slug) index answers a taken slug as 409. */
export async function writingCard<T>(slug: string | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (err) {
    if (isUniqueViolation(err)) throw appError('Conflict', `The slug '${slug}' is taken in this workspace.`, [{ path: 'slug', message: 'is taken' }])
    throw err
  }
}
