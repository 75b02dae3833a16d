import type * as Yaml from 'yaml';

/** `yaml`, loaded at its first use (a YAML workflow export or import, a task's YAML output): ~60 ms of every start otherwise. */
let yamlModule: typeof Yaml | undefined;
export const yaml = (): typeof Yaml => (yamlModule ??= require('yaml') as typeof Yaml);
