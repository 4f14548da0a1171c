// Invitations to a workspace: how long a link works, where it points, and the mail that carries it.
export const INVITATION_DAYS = 7
export const INVITATION_TTL_MS = INVITATION_DAYS * 24 * 3600 * 1000

/** The console address of an invitation's link (the token is the secret: shown once, never logged). */
export function invitationLink(publicUrl: string, token: string): string {
  return `${publicUrl}/console/invite/${token}`
}

/** The invitation mail, plain text: who invites, to what with which role, the link, its expiry. */
export function invitationMail(input: { to: string; inviter: string; workspace: string; projects: { name: string; slug: string; role: string }[]; link: string; expiresAt: Date }) {
  const lines = [
    'Hello,',
    '',
    `${input.inviter} invites you to the growthdesk workspace "${input.workspace}", with these roles:`,
    '',
    ...input.projects.map((p) => `  - ${p.name} (${p.slug}): ${p.role}`),
    '',
    'To join, open this link and choose a password:',
    '',
    input.link,
    '',
    `The link works once, for ${INVITATION_DAYS} days (until ${input.expiresAt.toISOString().replace('T', ' ').slice(0, 16)} UTC).`,
    'If you did not expect this invitation, ignore this mail: nothing happens unless the link is opened and a password chosen.',
  ]
  return { to: input.to, subject: `${input.inviter} invites you to ${input.workspace} on growthdesk`, text: `${lines.join('\n')}\n` }
}
