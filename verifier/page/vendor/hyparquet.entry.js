import { parquetReadObjects, parquetMetadata } from "hyparquet";
globalThis.hyparquet = { parquetReadObjects, parquetMetadata };
