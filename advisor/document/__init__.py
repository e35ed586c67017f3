"""The versioned JSON document of a report (:mod:`.report`) and its schema, generated from
the result types and checked in (:mod:`.schema`)."""
