/** A UUID (any version) as the platform's ids are; ids of another shape are unknown ids (404), not errors. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
