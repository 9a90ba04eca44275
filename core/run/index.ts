/**
 * The run: what the rest of Chalk uses of it. Its parts, each a folder, import downwards only:
 * base (the run's context, deps, session, policy and guard), endings (detention, graduation,
 * submit), resume (the run record), loop (runTicket and its steps), office-hours, and commands
 * (check, logs, status). Other core folders import this file only (dependency-cruiser's
 * no-deep-core-import); cli/ imports a command's own module, so `chalk status` loads only its path.
 */
export * from './base/deps.js';
export * from './base/prompt.js';
export * from './base/session.js';
export * from './loop/run-ticket.js';
