/*
 * Visibility of the library's public functions. The library is built with
 * hidden visibility; only definitions marked TSR_API are exported.
 */
#ifndef TESSERA_TRANSPORT_API_EXPORT_H
#define TESSERA_TRANSPORT_API_EXPORT_H

#ifndef TSR_API
#define TSR_API __attribute__((visibility("default")))
#endif

#endif /* TESSERA_TRANSPORT_API_EXPORT_H */
