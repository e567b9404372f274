//! annal search: placeholder until the query issue lands.
