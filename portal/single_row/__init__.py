"""Settings kept in one row that an administrator edits in the portal: the model base
(``models.SingleRow``) and the page that shows and saves it (``page.single_row_settings``)."""
