// A reader's share code and the address it makes (routes/share-link.ts answers it).

/** 64 random bits as 16 lower-case hex digits (the database's new_share_code()). */
export const SHARE_CODE = /^[0-9a-f]{16}$/;

/** The share link's path on the site. */
export const shareLinkPath = (code: string) => `/r/${code}`;
