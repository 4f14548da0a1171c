// Password-reset links: where a link points and the mail that carries it. The links themselves
// (single use, one hour, stored as hashes) are db/repositories/passwords.ts's.
import { RESET_LINK_TTL_MS } from '../db/repositories/passwords.ts'

export { RESET_LINK_TTL_MS }

/** The console page a reset token opens. */
export function resetLink(publicUrl: string, token: string): string {
  return `${publicUrl}/console/reset/${token}`
}

const utc = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`

/**
 * The mail that carries a reset link: plain text saying what it is, the link, how long it
 * works, and what to do when it was not asked for. `issuedBy`: the owner who made it, or
 * undefined when the person asked for it themselves (the sign-in page's "Forgot password?").
 */
export function resetMail(input: { to: string; link: string; expiresAt: Date; publicUrl: string; issuedBy?: string }): { to: string; subject: string; text: string } {
  // The server by its host only: the link below is the one link in the mail.
  const server = new URL(input.publicUrl).host
  const why = input.issuedBy
    ? `${input.issuedBy}, an owner in your growthdesk workspace, made a link for you to set a new password for your account ${input.to} on ${server}.`
    : `Someone (we hope you) asked to reset the password of your growthdesk account ${input.to} on ${server}.`
  return {
    to: input.to,
    subject: 'Set a new growthdesk password',
    text: [
      why,
      '',
      'Open this link to choose a new password:',
      '',
      input.link,
      '',
      `The link works once, for one hour (until ${utc(input.expiresAt)}). Setting a password with it signs your account out everywhere else.`,
      '',
      'If you did not ask for this, ignore this mail: your password stays as it is, and the link expires by itself.',
      '',
    ].join('\n'),
  }
}
